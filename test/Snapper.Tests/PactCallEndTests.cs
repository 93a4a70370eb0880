using Orleans.TestingHost;
using Snapper.Hosting;
using Snapper.Tests.Actors;
using Xunit;

namespace Snapper.Tests;

/// <summary>
/// Where a PACT's call counts as ended on its caller: where its answer arrives, so that the calls of a <c>Task.WhenAll</c>
/// cost the caller no turn each, except while the calling method has not awaited anything since it started the call.
/// These tests stage the one order that tells the two apart: the answer arrives while the method that made the call is
/// still running the synchronous part that started it, and that method then returns without awaiting the call.
/// </summary>
public sealed class PactCallEndTests : IAsyncLifetime
{
    private InProcessTestCluster _cluster = null!;

    public async Task InitializeAsync() =>
        _cluster = await ClusterFixture.StartAsync(ClusterFixture.UseLongBounds,
            new SnapperTestHooks { PactCallAnswered = caller => Gates.Reach($"answered-{caller}", 0) });

    public async Task DisposeAsync() => await _cluster.DisposeAsync();

    private IProbe Probe(long id) => _cluster.Client.GetGrain<IProbe>(id);

    [Fact]
    public async Task A_call_answered_before_its_method_returned_without_awaiting_it_still_aborts_the_pact()
    {
        var (root, callee) = (ClusterFixture.NewId(), ClusterFixture.NewId());
        await Probe(callee).StartTxn(Probe(callee).Increment, 1); // active, so the call below is local

        var abort = await Assert.ThrowsAsync<TransactionAbortedException>(() =>
            Probe(root).StartTxn(Probe(root).CallWithoutAwaitUntilAnswered, callee, ActorAccessInfo.Of(Probe(root), Probe(callee))));

        Assert.Equal(AbortReason.UnawaitedCall, abort.Reason);
        Assert.Equal(0, await Probe(root).StartTxn(Probe(root).Read, 0));
        Assert.Equal(1, await Probe(callee).StartTxn(Probe(callee).Read, 0));
    }

    [Fact]
    public async Task Calls_awaited_together_end_where_their_answers_arrive_and_the_pact_commits()
    {
        var ids = ClusterFixture.NewIds(5);
        var root = Probe(ids[0]);
        var declared = ActorAccessInfo.Of([.. ids.Select(id => (IAddressable)Probe(id))]);

        // Several rounds, so that some answers arrive while the root is still starting its calls and some after.
        for (var round = 1; round <= 20; round++)
        {
            await root.StartTxn(root.IncrementAll, ids[1..], declared);
        }

        foreach (var id in ids[1..])
        {
            Assert.Equal(20, await Probe(id).StartTxn(Probe(id).Read, 0));
        }
    }
}
