using Snapper.Tests.Actors;
using Xunit;

namespace Snapper.Tests;

/// <summary>
/// Wait-die and lock-wait bounds between ACTs that meet on the same actors. Their silo's execution bound is long
/// (<see cref="LockBoundsClusterFixture"/>): a transaction held at a gate and then waiting for a lock is ended by the
/// lock bound or the wait-die rule under test, never by its execution bound, however slowly a loaded machine reaches
/// the gates.
/// </summary>
public sealed class ActConflictTests(LockBoundsClusterFixture fixture) : IClassFixture<LockBoundsClusterFixture>
{
    private IProbe Probe(long id) => fixture.Client.GetGrain<IProbe>(id);

    private async Task<int> Read(long id) => await Probe(id).StartTxn(Probe(id).Read, 0);

    [Fact]
    public async Task Younger_transaction_dies_on_a_lock_an_older_one_holds()
    {
        var id = ClusterFixture.NewId();
        var gate = $"younger-dies-{id}";
        var older = Probe(id).StartTxn(Probe(id).Hold, new Hold(gate, AccessMode.ReadWrite));
        var olderTid = await Gates.WhenReached(gate);

        // Same first actor, so the same coordinator: the second transaction has a larger tid (younger).
        var abort = await Assert.ThrowsAsync<TransactionAbortedException>(() => Probe(id).StartTxn(Probe(id).Touch, AccessMode.Read));

        Assert.Equal(AbortReason.WaitDie, abort.Reason);
        Assert.True(abort.Tid > olderTid);
        Gates.Release(gate);
        Assert.Equal(olderTid, await older);
        Assert.Equal(1, await Read(id));
    }

    [Fact]
    public async Task Readers_share_the_lock()
    {
        var id = ClusterFixture.NewId();
        var gate = $"readers-{id}";
        var first = Probe(id).StartTxn(Probe(id).Hold, new Hold(gate, AccessMode.Read));
        await Gates.WhenReached(gate);

        Assert.Equal(0, await Read(id));

        Gates.Release(gate);
        await first;
    }

    [Fact]
    public async Task Older_transaction_waits_for_a_younger_holder_and_then_commits()
    {
        var (older, younger, olderRun, youngerRun) = await TwoHolders("older-waits");

        // The older one asks for the younger one's actor: it must wait, not die.
        Gates.Release(older.Gate);
        await Task.Delay(300);
        Assert.False(olderRun.IsCompleted);

        // The younger one asks for the older one's actor: it must die, releasing its lock to the waiter.
        Gates.Release(younger.Gate);
        var abort = await Assert.ThrowsAsync<TransactionAbortedException>(() => youngerRun);
        Assert.Equal(AbortReason.WaitDie, abort.Reason);
        Assert.Equal(younger.Tid, abort.Tid);
        Assert.Equal(older.Tid, await olderRun);

        // The older transaction incremented both actors; nothing of the younger one remains.
        Assert.Equal(1, await Read(older.Actor));
        Assert.Equal(1, await Read(younger.Actor));
    }

    [Fact]
    public async Task A_lock_wait_longer_than_the_bound_aborts_with_LockTimeout()
    {
        var (older, younger, olderRun, youngerRun) = await TwoHolders("lock-timeout");

        Gates.Release(older.Gate);
        var abort = await Assert.ThrowsAsync<TransactionAbortedException>(() => olderRun);
        Assert.Equal(AbortReason.LockTimeout, abort.Reason);

        // The younger one can now take the older one's actor, which was released by the abort.
        Gates.Release(younger.Gate);
        Assert.Equal(younger.Tid, await youngerRun);
        // Only the younger transaction committed: it incremented its own actor and the older one's.
        Assert.Equal(1, await Read(older.Actor));
        Assert.Equal(1, await Read(younger.Actor));
    }

    private sealed record Holder(long Actor, string Gate, long Tid);

    /// <summary>
    /// Starts two transactions on two actors, each holding its actor's write lock and, once released, calling
    /// the other's actor. Tids from two coordinators have no start order, so the test reads them and names
    /// which one is older.
    /// </summary>
    private async Task<(Holder Older, Holder Younger, Task<long> OlderRun, Task<long> YoungerRun)> TwoHolders(string name)
    {
        var ids = ClusterFixture.NewIds(2);
        var gates = ids.Select(id => $"{name}-{id}").ToArray();
        var runs = new[]
        {
            Probe(ids[0]).StartTxn(Probe(ids[0]).Hold, new Hold(gates[0], AccessMode.ReadWrite, ThenTouch: ids[1])),
            Probe(ids[1]).StartTxn(Probe(ids[1]).Hold, new Hold(gates[1], AccessMode.ReadWrite, ThenTouch: ids[0])),
        };
        var tids = new[] { await Gates.WhenReached(gates[0]), await Gates.WhenReached(gates[1]) };
        var o = tids[0] < tids[1] ? 0 : 1;
        var y = 1 - o;
        return (new Holder(ids[o], gates[o], tids[o]), new Holder(ids[y], gates[y], tids[y]), runs[o], runs[y]);
    }
}
