using Snapper.Tests.Actors;
using Xunit;

namespace Snapper.Tests;

/// <summary>
/// Wait-die between ACTs that meet on the same actors. Their silo's lock and execution bounds are long
/// (<see cref="LongBoundsClusterFixture"/>): a transaction held at a gate and then waiting for a lock is ended by the
/// wait-die rule under test, never by a bound, however slowly a loaded machine reaches the next staged step. (A CI run
/// once saw the older transaction's 2 s lock bound expire before the younger one, released 0.3 s after it, asked for
/// the older one's actor: the older aborted and the younger committed.)
/// </summary>
public sealed class ActConflictTests(LongBoundsClusterFixture fixture) : IClassFixture<LongBoundsClusterFixture>
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
        var (older, younger, olderRun, youngerRun) = await CrossedHolders.StartAsync(fixture.Client, "older-waits");

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
}
