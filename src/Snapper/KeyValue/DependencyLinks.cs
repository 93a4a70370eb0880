namespace Snapper.KeyValue;

/// <summary>
/// One dependency as Snapper stores it, the same record on the leader actor (under the leader key) and on the follower
/// actor (under the follower key), so that either side can find the other (thesis §5.2.2.2: a deleted follower
/// de-registers itself at its leaders).
/// </summary>
/// <remarks>Keys must be immutable values, as keys of a dictionary are; the function is data (an immutable object).</remarks>
[GenerateSerializer, Immutable, Alias("snapper.kv-link")]
internal sealed record DependencyLink(
    [property: Id(0)] DependencyKind Kind,
    [property: Id(1)] GrainId Leader,
    [property: Id(2)] object LeaderKey,
    [property: Id(3)] GrainId Follower,
    [property: Id(4)] object FollowerKey,
    [property: Id(5)] IUpdateFunction? Function)
{
    /// <summary>Whether both name the same pair of keys (a pair has at most one dependency of each kind).</summary>
    public bool SameKeys(DependencyLink other) =>
        Kind == other.Kind && Leader == other.Leader && Follower == other.Follower && LeaderKey.Equals(other.LeaderKey) && FollowerKey.Equals(other.FollowerKey);

    public Dependency ToPublic() => new(Kind, Leader, LeaderKey, Follower, FollowerKey);

    public override string ToString() => $"{Kind} dependency {Leader}[{LeaderKey}] -> {Follower}[{FollowerKey}]";
}

/// <summary>The dependencies of one key: where it leads (its followers) and where it follows (its leaders). Replaced, never changed.</summary>
[GenerateSerializer, Immutable, Alias("snapper.kv-key-links")]
internal sealed record KeyLinks(
    [property: Id(0)] DependencyLink[] AsLeader,
    [property: Id(1)] DependencyLink[] AsFollower)
{
    public static readonly KeyLinks None = new([], []);

    public bool IsEmpty => AsLeader.Length == 0 && AsFollower.Length == 0;

    public KeyLinks WithFollower(DependencyLink link) => this with { AsLeader = [.. AsLeader.Where(l => !l.SameKeys(link)), link] };

    public KeyLinks WithLeader(DependencyLink link) => this with { AsFollower = [.. AsFollower.Where(l => !l.SameKeys(link)), link] };

    public KeyLinks WithoutFollower(DependencyLink link) => this with { AsLeader = [.. AsLeader.Where(l => !l.SameKeys(link))] };

    public KeyLinks WithoutLeader(DependencyLink link) => this with { AsFollower = [.. AsFollower.Where(l => !l.SameKeys(link))] };
}

/// <summary>A change of a leader key, forwarded to its follower's actor: updated from one value to another, or deleted.</summary>
[GenerateSerializer, Immutable, Alias("snapper.kv-leader-change")]
internal sealed record LeaderChange(
    [property: Id(0)] DependencyLink Link,
    [property: Id(1)] bool Deleted,
    [property: Id(2)] object? OldValue,
    [property: Id(3)] object? NewValue);

/// <summary>Whether a key reaches <paramref name="TargetKey"/> of <paramref name="Target"/> through dependencies (the cycle check).</summary>
[GenerateSerializer, Immutable, Alias("snapper.kv-reach")]
internal sealed record ReachQuery(
    [property: Id(0)] object Key,
    [property: Id(1)] GrainId Target,
    [property: Id(2)] object TargetKey);

/// <summary>The leader key's value when a follower registered on it.</summary>
[GenerateSerializer, Immutable, Alias("snapper.kv-leader-value")]
internal sealed record LeaderValue([property: Id(0)] object? Value);

/// <summary>
/// The methods Snapper calls on a key-value actor to keep dependencies (thesis §5.3.3.1, step 13: internal methods).
/// Not a transactional interface: user code cannot name them, and clients cannot start them (they arrive only as
/// internal calls of a running transaction, see <c>CallRequest.Internal</c>).
/// </summary>
internal interface IDependencyEndpoints
{
    /// <summary>On a follower actor: applies changes of its leaders' keys (update functions, deletions, ended dependencies).</summary>
    Task ApplyLeaderChanges(TxnContext context, LeaderChange[] changes);

    /// <summary>On a leader actor: forgets followers that were deleted or de-registered.</summary>
    Task ForgetFollowers(TxnContext context, DependencyLink[] links);

    /// <summary>On a leader actor: registers a follower of one of its keys and returns that key's value.</summary>
    Task<LeaderValue> RegisterFollower(TxnContext context, DependencyLink link);

    /// <summary>Whether a key of this actor reaches the query's target key through dependencies.</summary>
    Task<bool> Reaches(TxnContext context, ReachQuery query);
}
