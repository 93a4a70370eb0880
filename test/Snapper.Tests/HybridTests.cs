using Snapper.Tests.Actors;
using Xunit;

namespace Snapper.Tests;

/// <summary>
/// The hybrid rules of thesis §3.3.4 on single, staged schedules: an ACT runs over a batch that completed but has
/// not committed, the serializability check at its first actor, and its commit after the batch it depends on. The silo's
/// bounds are long (<see cref="LongBoundsClusterFixture"/>): a batch or ACT held across staged steps ends by the step
/// that releases it, however slowly a loaded machine takes the steps between.
/// </summary>
public sealed class HybridTests(LongBoundsClusterFixture fixture) : IClassFixture<LongBoundsClusterFixture>
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(10);

    private IProbe Probe(long id) => fixture.Client.GetGrain<IProbe>(id);

    /// <summary>A PACT that wrote <paramref name="other"/> (its sub-batch there completed) and now holds its batch uncommitted on <paramref name="root"/>.</summary>
    private async Task<Task> HoldBatchAfterWriting(long root, long other, string gate, bool thenFail)
    {
        var pact = Probe(root).StartTxn(Probe(root).CallThenHold, new CallThenHold(other, gate, thenFail), ActorAccessInfo.Of(Probe(root), Probe(other)));
        await Gates.WhenReached(gate);
        return pact;
    }

    /// <summary>
    /// A PACT from <paramref name="root"/> that reads <paramref name="target"/>, returned once its batch was emitted, so
    /// that its sub-batch on the target is placed there now (after an ACT inside, before later ACTs). Its read waits
    /// for its turn there. The wait for the emission is what a delay used to guess: the token moves asynchronously.
    /// </summary>
    private async Task<Task<int>> PactReadingNow(long root, long target, string gate)
    {
        var pact = Probe(root).StartTxn(Probe(root).ReachThenRead, new ReachThenRead(gate, target), ActorAccessInfo.Of(Probe(root), Probe(target)));
        await Gates.WhenReached(gate);
        Gates.Release(gate);
        return pact;
    }

    [Fact]
    public async Task An_act_runs_over_a_completed_batch_and_commits_only_after_that_batch_committed()
    {
        var ids = ClusterFixture.NewIds(2);
        var gate = $"completed-batch-{ids[0]}";
        var pact = await HoldBatchAfterWriting(ids[0], ids[1], gate, thenFail: false);

        // The batch completed on ids[1], so the ACT may run there and reads its write. No batch follows the ACT,
        // but every batch up to the one it read from was delivered, so its AfterSet cannot close a cycle: it
        // passes the check and waits for that batch to commit.
        var act = Probe(ids[1]).StartTxn(Probe(ids[1]).Read, 0);

        // A negative check: a correct run passes however slow the silo is (the ACT cannot end while the batch is
        // held); the delay only gives a wrong early commit the time to show. The aborting-batch test below is the
        // check that cannot miss it.
        await Task.Delay(200);
        Assert.False(act.IsCompleted, "the ACT committed before the batch it read from");

        Gates.Release(gate);
        await pact.WaitAsync(Bound);
        Assert.Equal(1, await act.WaitAsync(Bound));
    }

    [Fact]
    public async Task An_act_between_two_batches_commits_only_after_the_batch_before_it_and_before_the_batch_after_it()
    {
        var ids = ClusterFixture.NewIds(3);
        var batchGate = $"before-act-{ids[0]}";
        var actGate = $"act-{ids[0]}";
        var before = await HoldBatchAfterWriting(ids[0], ids[1], batchGate, thenFail: false);

        // The ACT runs on ids[1] over the completed batch and holds there; a PACT emitted now is placed after it.
        var act = Probe(ids[1]).StartTxn(Probe(ids[1]).Hold, new Hold(actGate, AccessMode.ReadWrite));
        await Gates.WhenReached(actGate);
        var after = await PactReadingNow(ids[2], ids[1], $"after-act-{ids[0]}");

        // BeforeSet {before}, AfterSet {after}: the check passes, and the ACT waits for the batch before it.
        Gates.Release(actGate);
        await Task.Delay(200); // a negative check, as above
        Assert.False(act.IsCompleted, "the ACT committed before the batch it read from");
        Assert.False(after.IsCompleted, "a batch started before the ACT placed ahead of it ended");

        Gates.Release(batchGate);
        await Task.WhenAll(before, act).WaitAsync(Bound);
        Assert.Equal(2, await after.WaitAsync(Bound)); // the PACT's increment, then the ACT's
    }

    [Fact]
    public async Task An_act_that_read_from_a_batch_that_aborts_aborts_too_and_leaves_nothing()
    {
        var ids = ClusterFixture.NewIds(3);
        var batchGate = $"failing-batch-{ids[0]}";
        var actGate = $"act-over-failing-{ids[0]}";
        var failing = await HoldBatchAfterWriting(ids[0], ids[1], batchGate, thenFail: true);

        var act = Probe(ids[1]).StartTxn(Probe(ids[1]).Hold, new Hold(actGate, AccessMode.ReadWrite));
        await Gates.WhenReached(actGate);
        var after = await PactReadingNow(ids[2], ids[1], $"after-failing-{ids[0]}");
        Gates.Release(actGate);
        Gates.Release(batchGate);

        Assert.Equal(AbortReason.UserException, (await Assert.ThrowsAsync<TransactionAbortedException>(() => failing.WaitAsync(Bound))).Reason);
        Assert.Equal(AbortReason.CascadingAbort, (await Assert.ThrowsAsync<TransactionAbortedException>(() => act.WaitAsync(Bound))).Reason);
        await Assert.ThrowsAsync<TransactionAbortedException>(() => after.WaitAsync(Bound)); // uncommitted when the batch failed
        Assert.Equal(0, await Probe(ids[1]).StartTxn(Probe(ids[1]).Read, 0).WaitAsync(Bound));
        Assert.Equal(0, await Probe(ids[0]).StartTxn(Probe(ids[0]).Read, 0).WaitAsync(Bound));
    }

    [Fact]
    public async Task An_act_that_read_from_an_aborted_batch_aborts_even_when_a_later_batch_it_depends_on_commits()
    {
        var ids = ClusterFixture.NewIds(4);
        var (root1, y, root2, x) = (ids[0], ids[1], ids[2], ids[3]);
        var b1Gate = $"aborting-b1-{y}";
        var b2Gate = $"later-b2-{y}";
        var actGate = $"act-over-b1-{y}";
        var actOnX = $"act-on-x-{y}";

        // B1 wrote y and holds; the ACT reads B1's write on y and holds there.
        var b1 = await HoldBatchAfterWriting(root1, y, b1Gate, thenFail: true);
        var act = Probe(y).StartTxn(Probe(y).Hold, new Hold(actGate, AccessMode.ReadWrite, ThenTouch: x, ThenGate: actOnX));
        await Gates.WhenReached(actGate);

        // B1 fails: a cascading abort drops it (the ACT keeps the copy it read). B2, emitted after that abort,
        // writes x and holds; the ACT then runs on x after B2, so max(BeforeSet) is B2, which will commit.
        Gates.Release(b1Gate);
        await Assert.ThrowsAsync<TransactionAbortedException>(() => b1.WaitAsync(Bound));
        var b2 = await HoldBatchAfterWriting(root2, x, b2Gate, thenFail: false);
        Gates.Release(actGate);
        await Gates.WhenReached(actOnX); // it ran on x after B2, which has not committed: max(BeforeSet) is B2
        Gates.Release(actOnX);
        Gates.Release(b2Gate);
        await b2.WaitAsync(Bound);

        var abort = await Assert.ThrowsAsync<TransactionAbortedException>(() => act.WaitAsync(Bound));
        Assert.Equal(AbortReason.CascadingAbort, abort.Reason);
        Assert.Equal(0, await Probe(y).StartTxn(Probe(y).Read, 0).WaitAsync(Bound)); // nothing of B1 or the ACT
        Assert.Equal(1, await Probe(x).StartTxn(Probe(x).Read, 0).WaitAsync(Bound)); // B2's increment only
    }

    [Fact]
    public async Task An_act_ordered_after_a_batch_on_one_actor_and_before_an_earlier_batch_on_another_fails_the_check()
    {
        var ids = ClusterFixture.NewIds(5);
        var (y, x, root1, root2, root3) = (ids[0], ids[1], ids[2], ids[3], ids[4]);
        var onY = $"cycle-y-{y}";
        var onX = $"cycle-x-{y}";
        var b2Gate = $"cycle-b2-{y}";
        var act = Probe(y).StartTxn(Probe(y).Hold, new Hold(onY, AccessMode.ReadWrite, ThenTouch: x, ThenGate: onX));
        await Gates.WhenReached(onY);

        // B1 is placed after the ACT on y; B2, emitted after B1 (so a larger bid), completes on x (and everywhere, once
        // released) but cannot commit before B1.
        var b1 = await PactReadingNow(root1, y, $"cycle-b1-{y}");
        var b2 = await HoldBatchAfterWriting(root2, x, b2Gate, thenFail: false);
        Gates.Release(b2Gate);

        // The ACT now runs on x after B2, then B3 is placed after it there: BeforeSet {B2}, AfterSet {B1, B3}.
        Gates.Release(onY);
        await Gates.WhenReached(onX);
        var b3 = await PactReadingNow(root3, x, $"cycle-b3-{y}");
        Gates.Release(onX);

        var abort = await Assert.ThrowsAsync<TransactionAbortedException>(() => act.WaitAsync(Bound));
        Assert.Equal(AbortReason.Serializability, abort.Reason);
        Assert.Equal(0, await b1.WaitAsync(Bound));
        await b2.WaitAsync(Bound);
        Assert.Equal(1, await b3.WaitAsync(Bound)); // B2's increment only: nothing of the ACT remains
    }
}
