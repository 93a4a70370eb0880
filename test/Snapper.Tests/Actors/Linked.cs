using Snapper.KeyValue;

namespace Snapper.Tests.Actors;

/// <summary>Which update function a follower registers with.</summary>
public enum FollowBy
{
    /// <summary>Delete dependency: no function.</summary>
    Delete,

    /// <summary>The follower takes the leader's value (<see cref="Replicate{TLeaderKey, TFollowerKey, TValue}"/>).</summary>
    Replica,

    /// <summary>The follower adds each change of the leader to its own value (a sum over several leaders).</summary>
    Sum,
}

/// <summary>Makes a key of this actor follow a key of <paramref name="Leader"/>.</summary>
[GenerateSerializer]
public sealed record Follow([property: Id(0)] FollowBy By, [property: Id(1)] long Leader, [property: Id(2)] string LeaderKey, [property: Id(3)] string Key);

/// <summary>Values for another actor to put.</summary>
[GenerateSerializer]
public sealed record PutOn([property: Id(0)] long Actor, [property: Id(1)] Dictionary<string, int> Values);

/// <summary>Adds the leader's change (new minus old) to the follower; at registration, the leader's value.</summary>
[GenerateSerializer, Immutable, Alias("test.add-change")]
public sealed class AddChange : IUpdateFunction<string, int, string, int>
{
    public int Apply(string leaderKey, int oldLeaderValue, int newLeaderValue, string followerKey, int followerValue) =>
        oldLeaderValue == newLeaderValue ? followerValue + newLeaderValue : followerValue + newLeaderValue - oldLeaderValue;
}

/// <summary>A key-value actor (string to int) whose keys follow keys of others of its kind.</summary>
public interface ILinked : ITransactionalActor, IGrainWithIntegerKey
{
    Task Put(TxnContext ctx, Dictionary<string, int> values);

    Task<bool> Delete(TxnContext ctx, string key);

    Task<Dictionary<string, int>> All(TxnContext ctx, int unused);

    Task Register(TxnContext ctx, Follow follow);

    Task<bool> Deregister(TxnContext ctx, Follow follow);

    Task<Dependency[]> DependenciesOf(TxnContext ctx, string key);

    /// <summary>Has <paramref name="put"/>'s actor put its values (and forward them), then throws: nothing of it may stay.</summary>
    Task PutElsewhereThenFail(TxnContext ctx, PutOn put);

    /// <summary>Registers, then throws.</summary>
    Task RegisterThenFail(TxnContext ctx, Follow follow);
}

public sealed class Linked : KeyValueActor<string, int>, ILinked
{
    public async Task Put(TxnContext ctx, Dictionary<string, int> values)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite, [.. values.Keys]);
        foreach (var (key, value) in values)
        {
            state.Put(key, value);
        }
    }

    public async Task<bool> Delete(TxnContext ctx, string key) => (await GetState(ctx, AccessMode.ReadWrite, key)).Delete(key);

    public async Task<Dictionary<string, int>> All(TxnContext ctx, int unused) => new((await GetState(ctx, AccessMode.Read)).Entries);

    public Task Register(TxnContext ctx, Follow follow)
    {
        var leader = GrainFactory.GetGrain<ILinked>(follow.Leader);
        return follow.By switch
        {
            FollowBy.Delete => RegisterDeleteDependency(ctx, leader, follow.LeaderKey, follow.Key),
            FollowBy.Replica => RegisterUpdateDependency(ctx, leader, follow.LeaderKey, follow.Key, new Replicate<string, string, int>()),
            _ => RegisterUpdateDependency(ctx, leader, follow.LeaderKey, follow.Key, new AddChange()),
        };
    }

    public Task<bool> Deregister(TxnContext ctx, Follow follow) => DeregisterDependency(ctx,
        follow.By == FollowBy.Delete ? DependencyKind.Delete : DependencyKind.Update, GrainFactory.GetGrain<ILinked>(follow.Leader), follow.LeaderKey, follow.Key);

    public async Task<Dependency[]> DependenciesOf(TxnContext ctx, string key) => [.. (await GetState(ctx, AccessMode.Read, key)).DependenciesOf(key)];

    public async Task PutElsewhereThenFail(TxnContext ctx, PutOn put)
    {
        await CallActor(ctx, GrainFactory.GetGrain<ILinked>(put.Actor).Put, put.Values);
        throw new InvalidOperationException("failed after putting");
    }

    public async Task RegisterThenFail(TxnContext ctx, Follow follow)
    {
        await Register(ctx, follow);
        throw new InvalidOperationException("failed after registering");
    }
}
