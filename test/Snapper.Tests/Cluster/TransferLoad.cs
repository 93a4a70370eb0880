using System.Collections.Concurrent;
using Snapper.Tests.Actors;
using Xunit;
using Xunit.Abstractions;

namespace Snapper.Tests.Cluster;

/// <summary>
/// Clients moving 1 between bank accounts with ACTs and PACTs (half each) until stopped, remembering every transfer
/// they were told committed or aborted; then the check every migration test makes: each acknowledged transfer is on both
/// its accounts exactly once, no aborted one is on any, money is conserved, and none aborted because an actor moved
/// (<c>StartTxn</c> resubmits those by itself).
/// </summary>
internal sealed class TransferLoad : IAsyncDisposable
{
    private readonly IGrainFactory _grains;
    private readonly long[] _ids;
    private readonly ConcurrentDictionary<long, (long From, long To)> _acknowledged = new();
    private readonly ConcurrentBag<long> _aborted = [];
    private readonly ConcurrentBag<AbortReason> _reasons = [];
    private readonly CancellationTokenSource _stop = new();
    private readonly Task[] _clients;
    private long _nextOp = 1000;

    private TransferLoad(IGrainFactory grains, long[] ids, int clients)
    {
        _grains = grains;
        _ids = ids;
        _clients = [.. Enumerable.Range(1, clients).Select(seed => Task.Run(() => ClientAsync(seed)))];
    }

    public int Acknowledged => _acknowledged.Count;

    /// <summary>Gives each account <paramref name="balance"/>, then starts <paramref name="clients"/> clients.</summary>
    public static async Task<TransferLoad> StartAsync(IGrainFactory grains, long[] ids, decimal balance, int clients = 6)
    {
        foreach (var id in ids)
        {
            var account = grains.GetGrain<IBankAccount>(id);
            await account.StartTxn(account.Reset, balance);
        }

        return new TransferLoad(grains, ids, clients);
    }

    /// <summary>Waits until the clients have <paramref name="count"/> acknowledged transfers (at most 60 s).</summary>
    public async Task WhenAcknowledgedAsync(int count)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(60);
        while (_acknowledged.Count < count)
        {
            Assert.True(DateTime.UtcNow < deadline, $"only {_acknowledged.Count} of {count} transfers acknowledged within 60 s");
            await Task.Delay(20);
        }
    }

    /// <summary>Stops the clients, reads every account and checks the transfers; returns a line for the test output.</summary>
    public async Task<string> StopAndCheckAsync(decimal total)
    {
        await _stop.CancelAsync();
        await Task.WhenAll(_clients).WaitAsync(TimeSpan.FromSeconds(120));
        Assert.True(_acknowledged.Count > 0);
        Assert.DoesNotContain(AbortReason.ActorMigrating, _reasons);

        var states = new Dictionary<long, AccountState>();
        foreach (var id in _ids)
        {
            var account = _grains.GetGrain<IBankAccount>(id);
            states[id] = await account.StartTxn(account.Snapshot, 0, ActorAccessInfo.Of(account));
        }

        foreach (var (op, (from, to)) in _acknowledged)
        {
            Assert.Equal(1, states[from].Applied.Count(applied => applied == op));
            Assert.Equal(1, states[to].Applied.Count(applied => applied == op));
        }

        foreach (var op in _aborted)
        {
            Assert.DoesNotContain(_ids, id => states[id].Applied.Contains(op));
        }

        Assert.Equal(total, states.Values.Sum(s => s.Balance));
        return $"{_acknowledged.Count} transfers committed, {_aborted.Count} aborted: " +
            string.Join(", ", _reasons.GroupBy(r => r).Select(g => $"{g.Key} {g.Count()}"));
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        await Task.WhenAll(_clients).WaitAsync(TimeSpan.FromSeconds(120));
        _stop.Dispose();
    }

    private async Task ClientAsync(int seed)
    {
        var random = new Random(seed);
        while (!_stop.IsCancellationRequested)
        {
            var from = _ids[random.Next(_ids.Length)];
            var to = _ids[random.Next(_ids.Length)];
            if (from == to)
            {
                continue;
            }

            var op = Interlocked.Increment(ref _nextOp);
            var account = _grains.GetGrain<IBankAccount>(from);
            try
            {
                if (random.Next(2) == 0)
                {
                    await account.StartTxn(account.Transfer, new Transfer(op, to, 1m));
                }
                else
                {
                    await account.StartTxn(account.Transfer, new Transfer(op, to, 1m), ActorAccessInfo.Of(account, _grains.GetGrain<IBankAccount>(to)));
                }

                _acknowledged[op] = (from, to);
            }
            catch (TransactionAbortedException abort)
            {
                _aborted.Add(op);
                _reasons.Add(abort.Reason);
            }
        }
    }
}
