namespace Snapper.KeyValue;

/// <summary>What a change to a leader key does to its follower key (thesis §5.2.2.1).</summary>
[GenerateSerializer]
public enum DependencyKind
{
    /// <summary>
    /// An update of the leader key applies the dependency's update function to the follower key. Deleting the leader
    /// key ends the dependency and leaves the follower key as it is.
    /// </summary>
    Update = 1,

    /// <summary>Deleting the leader key deletes the follower key. Updates of the leader key do not reach the follower.</summary>
    Delete = 2,
}

/// <summary>
/// A dependency of a follower key on a leader key of another actor, as both actors store it (thesis §5.2.2): read it
/// with <see cref="DictionaryState{TKey, TValue}.DependenciesOf"/>.
/// </summary>
/// <param name="Kind">Update or delete dependency.</param>
/// <param name="Leader">The leader actor.</param>
/// <param name="LeaderKey">The leader key, of the leader actor's key type.</param>
/// <param name="Follower">The follower actor.</param>
/// <param name="FollowerKey">The follower key, of the follower actor's key type.</param>
[GenerateSerializer, Immutable, Alias("snapper.dependency")]
public sealed record Dependency(
    [property: Id(0)] DependencyKind Kind,
    [property: Id(1)] GrainId Leader,
    [property: Id(2)] object LeaderKey,
    [property: Id(3)] GrainId Follower,
    [property: Id(4)] object FollowerKey);

/// <summary>
/// How an update dependency computes a follower key's new value when its leader key changes (thesis §5.2.2.1, the
/// <c>IFunc.ApplyUpdate</c> of Fig. 5.2e). Implement it on a class Orleans can serialize (<c>[GenerateSerializer]</c>):
/// it is stored with the dependency on both actors and logged with them. It must be deterministic and depend only
/// on its arguments (it runs inside the transaction on the follower actor).
/// </summary>
/// <typeparam name="TLeaderKey">The leader actor's key type.</typeparam>
/// <typeparam name="TLeaderValue">The leader actor's value type.</typeparam>
/// <typeparam name="TFollowerKey">The follower actor's key type.</typeparam>
/// <typeparam name="TFollowerValue">The follower actor's value type.</typeparam>
public interface IUpdateFunction<in TLeaderKey, in TLeaderValue, in TFollowerKey, TFollowerValue> : IUpdateFunction
{
    /// <summary>
    /// The follower key's new value after the leader key went from <paramref name="oldLeaderValue"/> to
    /// <paramref name="newLeaderValue"/>. At registration both are the leader's current value, and
    /// <paramref name="followerValue"/> is the default when the follower key does not exist yet (the result creates it).
    /// </summary>
    TFollowerValue Apply(TLeaderKey leaderKey, TLeaderValue oldLeaderValue, TLeaderValue newLeaderValue, TFollowerKey followerKey, TFollowerValue? followerValue);

    object? IUpdateFunction.ApplyUntyped(object leaderKey, object? oldLeaderValue, object? newLeaderValue, object followerKey, object? followerValue) =>
        Apply((TLeaderKey)leaderKey, (TLeaderValue)oldLeaderValue!, (TLeaderValue)newLeaderValue!, (TFollowerKey)followerKey, (TFollowerValue?)followerValue);

    bool IUpdateFunction.FitsLeader(Type leaderKey, Type leaderValue) =>
        typeof(TLeaderKey).IsAssignableFrom(leaderKey) && typeof(TLeaderValue).IsAssignableFrom(leaderValue);
}

/// <summary>The untyped side of <see cref="IUpdateFunction{TLeaderKey, TLeaderValue, TFollowerKey, TFollowerValue}"/>: implement that one.</summary>
public interface IUpdateFunction
{
    internal object? ApplyUntyped(object leaderKey, object? oldLeaderValue, object? newLeaderValue, object followerKey, object? followerValue);

    /// <summary>Whether the function takes a leader actor's keys and values of these types.</summary>
    internal bool FitsLeader(Type leaderKey, Type leaderValue);
}

/// <summary>The update function of a replica: the follower key takes the leader key's value (thesis Fig. 5.3, <c>ReplicationFunction</c>).</summary>
[GenerateSerializer, Immutable, Alias("snapper.replicate`3")]
public sealed class Replicate<TLeaderKey, TFollowerKey, TValue> : IUpdateFunction<TLeaderKey, TValue, TFollowerKey, TValue>
{
    /// <inheritdoc/>
    public TValue Apply(TLeaderKey leaderKey, TValue oldLeaderValue, TValue newLeaderValue, TFollowerKey followerKey, TValue? followerValue) => newLeaderValue;
}
