using Snapper.KeyValue;
using Snapper.Tests.Actors;
using Xunit;

namespace Snapper.Tests.KeyValue;

/// <summary>
/// Dependencies between keys of key-value actors (thesis §5.2.2): registered from the follower, stored on both actors,
/// enforced inside the transaction that changes the leader, under ACTs and PACTs alike.
/// </summary>
[Collection(ClusterCollection.Name)]
public sealed class DependencyTests(ClusterFixture fixture)
{
    private ILinked L(long id) => fixture.Client.GetGrain<ILinked>(id);

    private Task<Dictionary<string, int>> All(long id) => L(id).StartTxn(L(id).All, 0);

    private Task<Dependency[]> DependenciesOf(long id, string key) => L(id).StartTxn(L(id).DependenciesOf, key);

    private Task Put(long id, Dictionary<string, int> values, bool pact = false, params long[] alsoReached) => pact
        ? L(id).StartTxn(L(id).Put, values, ActorAccessInfo.Of([L(id), .. alsoReached.Select(L)]))
        : L(id).StartTxn(L(id).Put, values);

    private Task Register(long follower, Follow follow, bool pact = false) => pact
        ? L(follower).StartTxn(L(follower).Register, follow, ActorAccessInfo.Of(L(follower), L(follow.Leader)))
        : L(follower).StartTxn(L(follower).Register, follow);

    private static long[] NewIds(int count) => [.. Enumerable.Range(0, count).Select(_ => ClusterFixture.NewId())];

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task An_update_of_a_leader_key_reaches_its_followers_through_a_chain_in_the_same_transaction(bool pact)
    {
        var (a, b, c) = NewIds(3) is [var x, var y, var z] ? (x, y, z) : default;
        await Put(a, new() { ["k"] = 1 });
        await Register(b, new Follow(FollowBy.Replica, a, "k", "k"), pact);
        await Register(c, new Follow(FollowBy.Replica, b, "k", "copy"), pact);
        Assert.Equal(new Dictionary<string, int> { ["copy"] = 1 }, await All(c)); // registering applies the function once

        await Put(a, new() { ["k"] = 5 }, pact, b, c);

        Assert.Equal(5, (await All(b))["k"]);
        Assert.Equal(5, (await All(c))["copy"]);
        var link = new Dependency(DependencyKind.Update, L(a).GetGrainId(), "k", L(b).GetGrainId(), "k");
        Assert.Equal([link], await DependenciesOf(a, "k"));
        Assert.Equal([new Dependency(DependencyKind.Update, L(b).GetGrainId(), "k", L(c).GetGrainId(), "copy"), link], await DependenciesOf(b, "k"));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Deleting_a_leader_key_deletes_its_delete_followers_in_cascade_and_ends_its_update_dependencies(bool pact)
    {
        var (a, b, c, d) = NewIds(4) is [var w, var x, var y, var z] ? (w, x, y, z) : default;
        await Put(a, new() { ["k"] = 1 });
        await Put(b, new() { ["k"] = 2, ["other"] = 0 });
        await Put(c, new() { ["k"] = 3 });
        await Register(b, new Follow(FollowBy.Delete, a, "k", "k"), pact);
        await Register(c, new Follow(FollowBy.Delete, b, "k", "k"), pact);
        await Register(d, new Follow(FollowBy.Replica, a, "k", "copy"), pact);

        Assert.True(pact
            ? await L(a).StartTxn(L(a).Delete, "k", ActorAccessInfo.Of(L(a), L(b), L(c), L(d)))
            : await L(a).StartTxn(L(a).Delete, "k"));

        Assert.Equal(new Dictionary<string, int> { ["other"] = 0 }, await All(b));
        Assert.Empty(await All(c));
        Assert.Equal(new Dictionary<string, int> { ["copy"] = 1 }, await All(d));
        Assert.Empty(await DependenciesOf(d, "copy"));
        Assert.Empty(await DependenciesOf(a, "k"));
    }

    [Fact]
    public async Task Deleting_or_deregistering_a_follower_key_ends_its_dependency_at_the_leader()
    {
        var (a, b, c) = NewIds(3) is [var x, var y, var z] ? (x, y, z) : default;
        await Put(a, new() { ["k"] = 1 });
        await Register(b, new Follow(FollowBy.Replica, a, "k", "k"));
        await Register(c, new Follow(FollowBy.Replica, a, "k", "x"));

        Assert.True(await L(b).StartTxn(L(b).Delete, "k"));
        Assert.True(await L(c).StartTxn(L(c).Deregister, new Follow(FollowBy.Replica, a, "k", "x")));
        Assert.False(await L(c).StartTxn(L(c).Deregister, new Follow(FollowBy.Replica, a, "k", "x")));
        Assert.Empty(await DependenciesOf(a, "k"));

        await Put(a, new() { ["k"] = 9 });
        Assert.Empty(await All(b));
        Assert.Equal(new Dictionary<string, int> { ["x"] = 1 }, await All(c));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_follower_key_may_follow_several_leaders_and_a_leader_may_lead_several_followers(bool pact)
    {
        var (a, b, sum, copy) = NewIds(4) is [var w, var x, var y, var z] ? (w, x, y, z) : default;
        await Put(a, new() { ["k"] = 1 });
        await Put(b, new() { ["k"] = 10 });
        await Register(sum, new Follow(FollowBy.Sum, a, "k", "total"), pact);
        await Register(sum, new Follow(FollowBy.Sum, b, "k", "total"), pact);
        await Register(copy, new Follow(FollowBy.Replica, a, "k", "k"), pact);
        Assert.Equal(11, (await All(sum))["total"]);

        await Put(a, new() { ["k"] = 3 }, pact, sum, copy);
        await Put(b, new() { ["k"] = 20 }, pact, sum);

        Assert.Equal(23, (await All(sum))["total"]);
        Assert.Equal(3, (await All(copy))["k"]);
        Assert.Equal(2, (await DependenciesOf(a, "k")).Length);
        Assert.Equal(2, (await DependenciesOf(sum, "total")).Length);
    }

    [Fact]
    public async Task A_dependency_that_would_close_a_cycle_is_refused_and_changes_nothing()
    {
        var (a, b, c) = NewIds(3) is [var x, var y, var z] ? (x, y, z) : default;
        await Put(a, new() { ["k"] = 1 });
        await Put(c, new() { ["k"] = 0 });
        await Register(b, new Follow(FollowBy.Replica, a, "k", "k"));
        await Register(c, new Follow(FollowBy.Delete, b, "k", "k"));

        var refused = await Assert.ThrowsAsync<TransactionAbortedException>(() => Register(a, new Follow(FollowBy.Replica, c, "k", "k")));

        Assert.Equal(AbortReason.InvalidCall, refused.Reason);
        Assert.Contains("cycle", refused.Message);
        Assert.Single(await DependenciesOf(a, "k"));
        Assert.Single(await DependenciesOf(c, "k"));
        await Put(a, new() { ["k"] = 2 });
        Assert.Equal(2, (await All(b))["k"]);
        Assert.Equal(0, (await All(c))["k"]);
    }

    public static TheoryData<string, string> BadRegistrations => new()
    {
        { "missing leader key", "the leader key does not exist" },
        { "own key", "one actor" },
        { "missing follower key", "the follower key does not exist" },
    };

    [Theory]
    [MemberData(nameof(BadRegistrations))]
    public async Task A_registration_that_cannot_hold_fails_with_a_typed_error_and_changes_nothing(string bad, string expected)
    {
        var (a, b) = NewIds(2) is [var x, var y] ? (x, y) : default;
        await Put(a, new() { ["k"] = 1 });
        var follow = bad switch
        {
            "missing leader key" => (b, new Follow(FollowBy.Replica, a, "absent", "k")),
            "own key" => (a, new Follow(FollowBy.Replica, a, "k", "other")),
            _ => (b, new Follow(FollowBy.Delete, a, "k", "absent")),
        };

        var refused = await Assert.ThrowsAsync<TransactionAbortedException>(() => Register(follow.Item1, follow.Item2));

        Assert.Equal(AbortReason.InvalidCall, refused.Reason);
        Assert.Contains(expected, refused.Message);
        Assert.Empty(await DependenciesOf(a, "k"));
        Assert.Empty(await All(b));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task An_aborted_transaction_undoes_its_forwarded_changes_and_its_registrations(bool pact)
    {
        var (a, b, root) = NewIds(3) is [var x, var y, var z] ? (x, y, z) : default;
        await Put(a, new() { ["k"] = 1 });
        await Register(b, new Follow(FollowBy.Replica, a, "k", "k"));

        var put = new PutOn(a, new() { ["k"] = 7 });
        var aborted = await Assert.ThrowsAsync<TransactionAbortedException>(() => pact
            ? L(root).StartTxn(L(root).PutElsewhereThenFail, put, ActorAccessInfo.Of(L(root), L(a), L(b)))
            : L(root).StartTxn(L(root).PutElsewhereThenFail, put));
        Assert.Equal(AbortReason.UserException, aborted.Reason);
        await Assert.ThrowsAsync<TransactionAbortedException>(() => pact
            ? L(b).StartTxn(L(b).RegisterThenFail, new Follow(FollowBy.Replica, a, "k", "y"), ActorAccessInfo.Of(L(b), L(a)))
            : L(b).StartTxn(L(b).RegisterThenFail, new Follow(FollowBy.Replica, a, "k", "y")));

        Assert.Equal(new Dictionary<string, int> { ["k"] = 1 }, await All(a));
        Assert.Equal(new Dictionary<string, int> { ["k"] = 1 }, await All(b));
        Assert.Single(await DependenciesOf(a, "k"));
    }

    [Fact]
    public async Task A_pact_that_did_not_declare_a_follower_actor_aborts_with_undeclared_access_and_changes_nothing()
    {
        var (a, b) = NewIds(2) is [var x, var y] ? (x, y) : default;
        await Put(a, new() { ["k"] = 1 });
        await Register(b, new Follow(FollowBy.Replica, a, "k", "k"));

        var aborted = await Assert.ThrowsAsync<TransactionAbortedException>(() => Put(a, new() { ["k"] = 2 }, pact: true));

        Assert.Equal(AbortReason.UndeclaredAccess, aborted.Reason);
        Assert.Equal(1, (await All(a))["k"]);
        Assert.Equal(1, (await All(b))["k"]);
    }

    [Fact]
    public async Task Snapper_internal_methods_cannot_be_started_by_a_client()
    {
        var a = ClusterFixture.NewId();

        var refused = await Assert.ThrowsAsync<TransactionalMethodNotFoundException>(() =>
            L(a).StartTxn(new TxnRequest(nameof(IDependencyEndpoints.ApplyLeaderChanges), null)));

        Assert.Contains(nameof(IDependencyEndpoints.ApplyLeaderChanges), refused.Message);
    }
}

/// <summary>Dependencies through the write-ahead log: a restarted silo still enforces what was registered before.</summary>
public sealed class DependencyRestartTests : IDisposable
{
    private readonly Durability.TemporaryFolder _data = new();

    public void Dispose() => _data.Dispose();

    [Fact]
    public async Task Dependencies_registered_before_a_restart_are_enforced_after_it()
    {
        var (a, b, c) = (ClusterFixture.NewId(), ClusterFixture.NewId(), ClusterFixture.NewId());
        await using (var cluster = await ClusterFixture.StartAsync(o => o.DataFolder = _data.Path))
        {
            ILinked L(long id) => cluster.Client.GetGrain<ILinked>(id);
            await L(a).StartTxn(L(a).Put, new Dictionary<string, int> { ["k"] = 1 });
            await L(c).StartTxn(L(c).Put, new Dictionary<string, int> { ["k"] = 0 });
            await L(b).StartTxn(L(b).Register, new Follow(FollowBy.Replica, a, "k", "k"), ActorAccessInfo.Of(L(b), L(a)));
            await L(c).StartTxn(L(c).Register, new Follow(FollowBy.Delete, a, "k", "k"));
        }

        await using (var restarted = await ClusterFixture.StartAsync(o => o.DataFolder = _data.Path))
        {
            ILinked L(long id) => restarted.Client.GetGrain<ILinked>(id);
            Assert.Equal(2, (await L(a).StartTxn(L(a).DependenciesOf, "k")).Length);
            await L(a).StartTxn(L(a).Put, new Dictionary<string, int> { ["k"] = 4 });
            Assert.Equal(4, (await L(b).StartTxn(L(b).All, 0))["k"]);
            Assert.True(await L(a).StartTxn(L(a).Delete, "k", ActorAccessInfo.Of(L(a), L(b), L(c))));
            Assert.Empty(await L(c).StartTxn(L(c).All, 0));
            Assert.Empty(await L(b).StartTxn(L(b).DependenciesOf, "k"));
        }
    }
}
