using Orleans.TestingHost;
using Snapper.Hosting;
using Snapper.Logging;
using Snapper.Tests.Actors;
using Xunit;

namespace Snapper.Tests.Durability;

/// <summary>
/// Injected log faults through the public API: a write that fails after reaching the file, and a disk that stalls.
/// The client hears "in doubt" for a decided transaction (never "aborted"), nothing waits without a bound, and recovery
/// after a restart settles the outcome the way the disk holds it.
/// </summary>
public sealed class LogFaultTests : IDisposable
{
    private readonly TemporaryFolder _data = new();

    public void Dispose() => _data.Dispose();

    /// <summary>
    /// The bound on a log write where a test waits for it to fire: short, so the test is quick, and still a few times what
    /// a healthy write takes on a loaded machine, where an fsync can wait a second for other processes' writes (the
    /// cluster's other writes, made before the stall, must not reach it). Elsewhere the default bound holds.
    /// </summary>
    private static readonly TimeSpan StalledWriteBound = TimeSpan.FromSeconds(3);

    private Task<InProcessTestCluster> StartAsync(SnapperTestHooks? hooks = null, Action<SnapperOptions>? configure = null) => ClusterFixture.StartAsync(o =>
    {
        o.DataFolder = _data.Path;
        o.CheckpointInterval = TimeSpan.Zero;
        configure?.Invoke(o);
    }, hooks);

    private static IBankAccount Account(IGrainFactory grains, long id) => grains.GetGrain<IBankAccount>(id);

    private static ActorAccessInfo Declare(IGrainFactory grains, params long[] ids) =>
        ActorAccessInfo.Of([.. ids.Select(id => (IAddressable)Account(grains, id))]);

    private static async Task<decimal[]> Balances(IGrainFactory grains, params long[] ids) =>
        (await Account(grains, ids[0]).StartTxn(Account(grains, ids[0]).ReadAll, ids)).Select(s => s.Balance).ToArray();

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_commit_whose_log_write_fails_after_writing_is_in_doubt_and_recovery_settles_it(bool pact)
    {
        var hooks = new SnapperTestHooks();
        await using (var cluster = await StartAsync(hooks))
        {
            var grains = cluster.Client;
            await Account(grains, 1).StartTxn(Account(grains, 1).Deposit, new Deposit(1, 100m));

            // The commit record reaches the file (the OS has it), then the write reports failure before the fsync.
            hooks.AfterLogWrite = payloads =>
            {
                if (payloads.Any(p => (LogRecordType)p[0] is LogRecordType.Committed or LogRecordType.CommittedAwaitingAcks))
                {
                    throw new IOException("injected: the disk failed after the write");
                }
            };
            var transfer = new Transfer(2, 2, 30m);
            var doubt = await Assert.ThrowsAsync<TransactionInDoubtException>(() => pact
                ? Account(grains, 1).StartTxn(Account(grains, 1).Transfer, transfer, Declare(grains, 1, 2))
                : Account(grains, 1).StartTxn(Account(grains, 1).Transfer, transfer));
            Assert.True(doubt.Tid > 0);

            // The log refuses every write from now on: later transactions abort at once instead of waiting.
            var later = await Assert.ThrowsAsync<TransactionAbortedException>(() =>
                Account(grains, 2).StartTxn(Account(grains, 2).Transfer, new Transfer(3, 1, 1m), Declare(grains, 2, 1)));
            Assert.Contains(later.Reason, new[] { AbortReason.LogWriteFailed, AbortReason.PrepareFailed });
            await Assert.ThrowsAsync<TransactionAbortedException>(() => Account(grains, 2).StartTxn(Account(grains, 2).Transfer, new Transfer(4, 1, 1m)));
        }

        // The frame was in the file: recovery commits the transaction the client heard was in doubt.
        await using (var restarted = await StartAsync())
        {
            Assert.Equal([70m, 30m], await Balances(restarted.Client, 1, 2));
        }
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_stalled_log_reports_in_doubt_within_the_bound_and_the_write_counts_once_it_lands(bool pact)
    {
        var hooks = new SnapperTestHooks();
        using var disk = new ManualResetEventSlim(false);
        await using (var cluster = await StartAsync(hooks, o => o.LogWriteTimeout = StalledWriteBound))
        {
            var grains = cluster.Client;
            await Account(grains, 1).StartTxn(Account(grains, 1).Deposit, new Deposit(1, 100m));

            hooks.AfterLogWrite = _ => disk.Wait();
            var transfer = new Transfer(2, 2, 30m);
            await Assert.ThrowsAsync<TransactionInDoubtException>(() => pact
                ? Account(grains, 1).StartTxn(Account(grains, 1).Transfer, transfer, Declare(grains, 1, 2))
                : Account(grains, 1).StartTxn(Account(grains, 1).Transfer, transfer));

            // The disk comes back: the stalled write completes and is fsynced.
            hooks.AfterLogWrite = null;
            disk.Set();
        }

        await using (var restarted = await StartAsync())
        {
            Assert.Equal([70m, 30m], await Balances(restarted.Client, 1, 2));
        }
    }

    [Fact]
    public async Task A_full_log_queue_holds_new_transactions_back_until_the_disk_catches_up()
    {
        var hooks = new SnapperTestHooks();
        using var disk = new ManualResetEventSlim(false);
        await using var cluster = await StartAsync(hooks, o =>
        {
            o.LogQueueCapacity = 1;
            o.LogWriteTimeout = TimeSpan.FromSeconds(30);
        });
        var grains = cluster.Client;
        await Account(grains, 1).StartTxn(Account(grains, 1).Deposit, new Deposit(1, 100m));
        await Account(grains, 3).StartTxn(Account(grains, 3).Deposit, new Deposit(2, 100m));

        var stalled = Stall(hooks, disk);
        var first = Account(grains, 1).StartTxn(Account(grains, 1).Transfer, new Transfer(3, 2, 30m));
        await stalled.WaitAsync(TimeSpan.FromSeconds(10));
        var second = Account(grains, 3).StartTxn(Account(grains, 3).Transfer, new Transfer(4, 4, 10m));

        // The stalled append fills the queue: the second transaction has not even started. (This can only pass on a
        // correct build; a broken one would let it commit, which it cannot while the disk is held.)
        await Task.Delay(200);
        Assert.False(second.IsCompleted);

        hooks.AfterLogWrite = null;
        disk.Set();
        await first;
        await second;
        Assert.Equal([70m, 30m, 90m, 10m], await Balances(grains, 1, 2, 3, 4));
    }

    /// <summary>Holds every log write until <paramref name="disk"/> is set; completes when the first write is held.</summary>
    private static Task Stall(SnapperTestHooks hooks, ManualResetEventSlim disk)
    {
        var reached = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        hooks.AfterLogWrite = _ =>
        {
            reached.TrySetResult();
            disk.Wait();
        };
        return reached.Task;
    }
}
