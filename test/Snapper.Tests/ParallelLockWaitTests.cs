using Snapper.Tests.Actors;
using Xunit;

namespace Snapper.Tests;

/// <summary>
/// Two parallel calls of one ACT that wait for the same lock: when the first request reaches the lock bound, the second,
/// queued behind it, fails with it. Before, nothing completed the first request once it left the queue: the second call
/// ran for ever on the participant (exempt from the participant timeout, which spares running methods), the first
/// actor's method waited for it, and the client heard nothing until its own 30 s response timeout. The silo's execution
/// bound is long (<see cref="LockBoundsClusterFixture"/>), so only the lock bound can end the wait.
/// </summary>
public sealed class ParallelLockWaitTests(LockBoundsClusterFixture fixture) : IClassFixture<LockBoundsClusterFixture>
{
    private IProbe Probe(long id) => fixture.Client.GetGrain<IProbe>(id);

    [Fact]
    public async Task Parallel_requests_of_one_transaction_behind_a_lock_wait_that_timed_out_abort_with_LockTimeout()
    {
        var ids = ClusterFixture.NewIds(2);
        var (first, target) = (ids[0], ids[1]);
        var olderGate = $"parallel-lock-older-{first}";
        var holderGate = $"parallel-lock-holder-{target}";

        // The older transaction gets its tid first and stops at its gate, holding nothing.
        var older = Probe(first).StartTxn(Probe(first).ReachThenTouchTwice, new ReachThenTouchTwice(olderGate, target));
        var olderTid = await Gates.WhenReached(olderGate);

        // A younger one takes the target's write lock and keeps it until the end of the test.
        var holder = Probe(target).StartTxn(Probe(target).Hold, new Hold(holderGate, AccessMode.ReadWrite));
        var holderTid = await Gates.WhenReached(holderGate);
        Assert.True(olderTid < holderTid, "ACT tids of one silo increase in the order the transactions start");

        // The older one now asks for the lock twice at once: it may wait (wait-die), one request behind the other.
        Gates.Release(olderGate);
        var abort = await Assert.ThrowsAsync<TransactionAbortedException>(() => older);
        Assert.Equal(AbortReason.LockTimeout, abort.Reason);
        Assert.Equal(olderTid, abort.Tid);

        // The holder was never disturbed; the target has its write and nothing of the older transaction.
        Gates.Release(holderGate);
        Assert.Equal(holderTid, await holder);
        await Probe(target).StartTxn(Probe(target).Increment, 1);
        Assert.Equal(2, await Probe(target).StartTxn(Probe(target).Read, 0));
    }
}
