using Snapper.Tests.Actors;
using Xunit;

namespace Snapper.Tests;

/// <summary>
/// The lock bound between two ACTs that hold each other's next actor. The silo's execution bound is long
/// (<see cref="LockBoundsClusterFixture"/>), so the 2 s lock bound alone ends the older one's wait; the younger one stays
/// at its gate until then, so no delay of the machine changes which bound fires.
/// </summary>
public sealed class LockTimeoutTests(LockBoundsClusterFixture fixture) : IClassFixture<LockBoundsClusterFixture>
{
    private IProbe Probe(long id) => fixture.Client.GetGrain<IProbe>(id);

    private async Task<int> Read(long id) => await Probe(id).StartTxn(Probe(id).Read, 0);

    [Fact]
    public async Task A_lock_wait_longer_than_the_bound_aborts_with_LockTimeout()
    {
        var (older, younger, olderRun, youngerRun) = await CrossedHolders.StartAsync(fixture.Client, "lock-timeout");

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
}
