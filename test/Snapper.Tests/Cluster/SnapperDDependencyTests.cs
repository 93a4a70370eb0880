using Snapper.Tests.Actors;
using Xunit;

namespace Snapper.Tests.Cluster;

/// <summary>Dependencies between keys of key-value actors on two workers: forwarding rides the transaction across them.</summary>
[Collection(SnapperDCollection.Name)]
public sealed class SnapperDDependencyTests(SnapperDFixture fixture)
{
    private ILinked L(long id) => fixture.Client.GetGrain<ILinked>(id);

    private Task<Dictionary<string, int>> All(long id) => L(id).StartTxn(L(id).All, 0, ActorAccessInfo.Of(L(id)));

    [Fact]
    public async Task Changes_of_a_leader_key_reach_followers_on_the_other_worker_by_acts_and_global_pacts()
    {
        var leader = fixture.OnWorker<ILinked>(0, 1)[0];
        var (replica, stock) = fixture.OnWorker<ILinked>(1, 2) is [var x, var y] ? (x, y) : default;
        await L(leader).StartTxn(L(leader).Put, new Dictionary<string, int> { ["k"] = 1 });
        await L(stock).StartTxn(L(stock).Put, new Dictionary<string, int> { ["k"] = 7 });
        await L(replica).StartTxn(L(replica).Register, new Follow(FollowBy.Replica, leader, "k", "k"), ActorAccessInfo.Of(L(replica), L(leader)));
        await L(stock).StartTxn(L(stock).Register, new Follow(FollowBy.Delete, leader, "k", "k"));

        await L(leader).StartTxn(L(leader).Put, new Dictionary<string, int> { ["k"] = 2 });
        Assert.Equal(2, (await All(replica))["k"]);
        await L(leader).StartTxn(L(leader).Put, new Dictionary<string, int> { ["k"] = 3 }, ActorAccessInfo.Of(L(leader), L(replica)));
        Assert.Equal(3, (await All(replica))["k"]);

        Assert.True(await L(leader).StartTxn(L(leader).Delete, "k", ActorAccessInfo.Of(L(leader), L(replica), L(stock))));
        Assert.Empty(await All(stock));
        Assert.Equal(new Dictionary<string, int> { ["k"] = 3 }, await All(replica));
        Assert.Empty(await L(replica).StartTxn(L(replica).DependenciesOf, "k"));
    }
}
