using System.Collections.Concurrent;
using Snapper.Workloads.Ledger;

namespace Snapper.ClusterKillCheck;

/// <summary>
/// Live migrations beside the ledger load (<c>--migrations N</c>): N loops that each move a random account to another
/// worker, one move at a time, until the load stops. Silos are killed under them, so some moves meet a worker that is
/// down (refused), are cut off mid-way (rolled back, or completed by the master's directory), or lose their helper (the
/// master); every account must still hold exactly what the check expects. Counts what happened for the progress line.
/// </summary>
internal sealed class MigrationLoad(IGrainFactory grains, LedgerAccounts accounts, int loops, int seed)
{
    private readonly ConcurrentDictionary<string, int> _failed = new(StringComparer.Ordinal);
    private volatile bool _stopping;
    private int _moved;
    private Task[] _loops = [];

    public int Moved => Volatile.Read(ref _moved);

    public int Failed => _failed.Values.Sum();

    /// <summary>Failed moves by reason, for the report.</summary>
    public string FailuresText => _failed.IsEmpty ? "none" : string.Join(", ", _failed.OrderBy(f => f.Key).Select(f => $"{f.Key} {f.Value}"));

    public void Start() => _loops = [.. Enumerable.Range(0, loops).Select(loop => Task.Run(() => LoopAsync(seed * 7_919 + loop)))];

    /// <summary>Stops the loops and waits for the moves under way (each is bounded by the cluster's own timeouts).</summary>
    public async Task StopAsync(TimeSpan bound)
    {
        _stopping = true;
        try
        {
            await Task.WhenAll(_loops).WaitAsync(bound);
        }
        catch (TimeoutException)
        {
            Console.WriteLine($"migrations still under way {bound.TotalSeconds:0} s after the stop; the check goes on");
        }
    }

    private async Task LoopAsync(int seed)
    {
        var random = new Random(seed);
        while (!_stopping)
        {
            var account = grains.GetGrain<ILedgerAccount>(accounts.All[random.Next(accounts.All.Length)]);
            try
            {
                var from = await grains.WorkerOfAsync(account);
                await grains.MigrateAsync(account, (from + 1 + random.Next(accounts.Workers - 1)) % accounts.Workers);
                Interlocked.Increment(ref _moved);
                await Task.Delay(20);
            }
            catch (Exception e)
            {
                _failed.AddOrUpdate(e is MigrationException m ? m.Reason.ToString() : e.GetType().Name, 1, (_, n) => n + 1);
                // The master or a worker is down: no point in asking hundreds of times a second until it is back.
                await Task.Delay(250);
            }
        }
    }
}
