using Snapper.Tests.Actors;
using Xunit;

namespace Snapper.Tests;

/// <summary>The execution bound of an ACT (the shared silo's ExecutionTimeout, 5 s).</summary>
[Collection(ClusterCollection.Name)]
public sealed class ExecutionBoundTests(ClusterFixture fixture)
{
    private IProbe Probe(long id) => fixture.Client.GetGrain<IProbe>(id);

    private async Task<int> Read(long id) => await Probe(id).StartTxn(Probe(id).Read, 0);

    [Fact]
    public async Task A_transaction_that_runs_past_the_execution_bound_aborts_and_releases_its_participants()
    {
        var ids = ClusterFixture.NewIds(2);
        var gate = $"execution-timeout-{ids[0]}";
        var run = Probe(ids[0]).StartTxn(Probe(ids[0]).CallThenHold, new CallThenHold(ids[1], gate));
        await Gates.WhenReached(gate);

        // Never released in time: the fixture's ExecutionTimeout (5 s) ends it.
        var abort = await Assert.ThrowsAsync<TransactionAbortedException>(() => run);

        Assert.Equal(AbortReason.ExecutionTimeout, abort.Reason);
        Gates.Release(gate);
        Assert.Equal(0, await Read(ids[1]));
        Assert.Equal(0, await Read(ids[0]));
    }
}
