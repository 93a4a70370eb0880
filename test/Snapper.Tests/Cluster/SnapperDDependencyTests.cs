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

    [Fact]
    public async Task A_global_pact_on_other_keys_runs_beside_a_local_batch_holding_a_key_of_a_key_level_actor()
    {
        var shelf = fixture.Client.GetGrain<IKeyedShelf>(fixture.OnWorker<IKeyedShelf>(1, 1)[0]);
        var caller = fixture.Client.GetGrain<IKeyedShelf>(fixture.OnWorker<IKeyedShelf>(0, 1)[0]);
        var (holdA, holdB) = ($"cluster-key-a-{Guid.NewGuid()}", $"cluster-key-b-{Guid.NewGuid()}");
        var local = shelf.StartTxn(shelf.Write, new ShelfWrite("a", 1, holdA), new ActorAccessInfo().AddKeys(shelf, "a"));
        await Gates.WhenReached(holdA);

        // A global PACT (two workers) declares key b of the shelf: its part is merged after the local batch on worker 1,
        // and runs while that batch still holds key a.
        var global = caller.StartTxn(caller.WriteInParallel, new ParallelWrites(shelf.GetPrimaryKeyLong(), [new("b", 2, holdB)]),
            new ActorAccessInfo().AddKeys(shelf, "b").Add(caller));
        await Gates.WhenReached(holdB);
        Gates.Release(holdB);
        Gates.Release(holdA);
        await Task.WhenAll(local, global);
        Assert.Equal(new Dictionary<string, int> { ["a"] = 1, ["b"] = 2 }, await shelf.StartTxn(shelf.All, 0, ActorAccessInfo.Of(shelf)));

        var undeclared = await Assert.ThrowsAsync<TransactionAbortedException>(() => caller.StartTxn(caller.WriteInParallel,
            new ParallelWrites(shelf.GetPrimaryKeyLong(), [new("c", 1)]), new ActorAccessInfo().AddKeys(shelf, "b").Add(caller)));
        Assert.Equal(AbortReason.UndeclaredAccess, undeclared.Reason);
        Assert.Contains("'c'", undeclared.Message);
    }
}
