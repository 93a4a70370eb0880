using Snapper.Actors;
using Snapper.KeyValue;

namespace Snapper;

/// <summary>
/// Dependencies between keys of key-value actors (thesis §5.2.2, §5.3.3.1): registered from the follower's side, stored
/// on both actors, and enforced inside the transaction that changes a leader key. When a method of this actor returns,
/// the changes it made to leader keys are forwarded to the followers' actors (one internal call per actor), applied
/// there, and forwarded again from there if they changed leader keys in turn. A cycle can never form: registration
/// refuses a dependency whose follower key already reaches its leader key, so forwarding always ends.
/// </summary>
/// <remarks>
/// Everything here runs inside the user's transaction, through <c>GetState</c> and calls to the other actors, so the
/// ordinary concurrency control and 2PC or batch commit cover it. A PACT must declare the accesses this adds: one to
/// each follower actor per method that changes its leaders' keys (and to each actor a cycle check or a de-registration
/// visits); an undeclared one aborts it as any undeclared access does.
/// </remarks>
public abstract partial class KeyValueActor<TKey, TValue>
{
    private static readonly TransactionalMethodTable DependencyMethods = TransactionalMethodTable.ForInternalInterface(typeof(IDependencyEndpoints));

    private protected sealed override TransactionalMethodTable InternalMethods => DependencyMethods;

    private GrainId Self => this.GetGrainId();

    /// <summary>
    /// Makes <paramref name="followerKey"/> of this actor follow <paramref name="leaderKey"/> of <paramref name="leader"/> by
    /// update (thesis §5.2.2.5): from now on, each update of the leader key sets the follower key to what
    /// <paramref name="function"/> computes. Registering applies the function once, with the leader's current value as
    /// both old and new value, which creates the follower key if it does not exist.
    /// </summary>
    /// <exception cref="TransactionAbortedException">
    /// With <see cref="AbortReason.InvalidCall"/> (a <see cref="DependencyException"/>): the leader key does not exist, the
    /// dependency would close a cycle, the types do not fit the leader actor, or the leader is this actor.
    /// </exception>
    protected Task RegisterUpdateDependency<TLeaderKey, TLeaderValue>(TxnContext context, IAddressable leader, TLeaderKey leaderKey, TKey followerKey,
        IUpdateFunction<TLeaderKey, TLeaderValue, TKey, TValue> function)
        where TLeaderKey : notnull
    {
        ArgumentNullException.ThrowIfNull(function);
        return RegisterAsync(context, new DependencyLink(DependencyKind.Update, leader.GetGrainId(), leaderKey, Self, followerKey, function));
    }

    /// <summary>
    /// Makes <paramref name="followerKey"/> of this actor, which must exist, follow <paramref name="leaderKey"/> of
    /// <paramref name="leader"/> by delete: deleting the leader key deletes the follower key (thesis §5.2.2.2).
    /// </summary>
    /// <exception cref="TransactionAbortedException">As for <see cref="RegisterUpdateDependency"/>, or the follower key does not exist.</exception>
    protected Task RegisterDeleteDependency<TLeaderKey>(TxnContext context, IAddressable leader, TLeaderKey leaderKey, TKey followerKey)
        where TLeaderKey : notnull =>
        RegisterAsync(context, new DependencyLink(DependencyKind.Delete, leader.GetGrainId(), leaderKey, Self, followerKey, null));

    /// <summary>
    /// Ends the dependency of <paramref name="kind"/> of <paramref name="followerKey"/> on <paramref name="leaderKey"/> of
    /// <paramref name="leader"/>, on both actors; the follower key stays as it is. False if there was none. (Deleting the
    /// follower key ends its dependencies too.)
    /// </summary>
    protected async Task<bool> DeregisterDependency<TLeaderKey>(TxnContext context, DependencyKind kind, IAddressable leader, TLeaderKey leaderKey, TKey followerKey)
        where TLeaderKey : notnull
    {
        var view = await GetState(context, AccessMode.ReadWrite, followerKey);
        var links = view.LinksOf(followerKey);
        var probe = new DependencyLink(kind, leader.GetGrainId(), leaderKey, Self, followerKey, null);
        if (links.AsFollower.FirstOrDefault(probe.SameKeys) is not { } registered)
        {
            return false;
        }

        view.SetLinks(followerKey, links.WithoutLeader(registered));
        await CallInternal(context, registered.Leader, nameof(IDependencyEndpoints.ForgetFollowers), new[] { registered });
        return true;
    }

    private async Task RegisterAsync(TxnContext context, DependencyLink link)
    {
        if (link.Leader == Self)
        {
            throw new DependencyException($"{link} links two keys of one actor; a dependency links keys of two actors.");
        }

        var followerKey = (TKey)link.FollowerKey;
        var view = await GetState(context, AccessMode.ReadWrite, followerKey);
        if (link.Kind == DependencyKind.Delete && !view.ContainsKey(followerKey))
        {
            throw new DependencyException($"{link}: the follower key does not exist; create it before it follows a key by delete.");
        }

        if (await ReachesAsync(context, view, followerKey, link.Leader, link.LeaderKey))
        {
            throw new DependencyException($"{link} would close a cycle: the follower key already reaches the leader key through dependencies.");
        }

        var leaderValue = (LeaderValue)(await CallInternal(context, link.Leader, nameof(IDependencyEndpoints.RegisterFollower), link))!;
        view.SetLinks(followerKey, view.LinksOf(followerKey).WithLeader(link));
        if (link.Function is { } function)
        {
            var current = view.TryGet(followerKey, out var value) ? value : default;
            view.Put(followerKey, (TValue)function.ApplyUntyped(link.LeaderKey, leaderValue.Value, leaderValue.Value, followerKey, current)!);
        }
    }

    /// <summary>Whether <paramref name="key"/> (acquired in <paramref name="view"/>) reaches the target key through the dependencies where it leads.</summary>
    private async Task<bool> ReachesAsync(TxnContext context, DictionaryState<TKey, TValue> view, TKey key, GrainId target, object targetKey)
    {
        foreach (var link in view.LinksOf(key).AsLeader)
        {
            if ((link.Follower == target && link.FollowerKey.Equals(targetKey))
                || (bool)(await CallInternal(context, link.Follower, nameof(IDependencyEndpoints.Reaches), new ReachQuery(link.FollowerKey, target, targetKey)))!)
            {
                return true;
            }
        }

        return false;
    }

    private protected sealed override bool HasAfterMethod => true;

    /// <summary>Forwards what the method changed in leader keys (thesis §5.3.3.1 step 12), one call per actor, awaited.</summary>
    private protected sealed override async Task AfterMethodAsync(TxnContext context)
    {
        if (TransactionScoped<DictionaryState<TKey, TValue>>(context, create: null) is not { } view)
        {
            return;
        }

        var (toFollowers, toLeaders) = view.TakeForwards(Self);
        if (toFollowers.Count == 0 && toLeaders.Count == 0)
        {
            return;
        }

        await Task.WhenAll(
            toFollowers.GroupBy(c => c.Link.Follower).Select(group =>
                CallInternal(context, group.Key, nameof(IDependencyEndpoints.ApplyLeaderChanges), group.ToArray()))
            .Concat(toLeaders.GroupBy(l => l.Leader).Select(group =>
                CallInternal(context, group.Key, nameof(IDependencyEndpoints.ForgetFollowers), group.ToArray()))));
    }

    async Task IDependencyEndpoints.ApplyLeaderChanges(TxnContext context, LeaderChange[] changes)
    {
        var view = await GetState(context, AccessMode.ReadWrite, [.. changes.Select(c => KeyOf(c.Link.FollowerKey)).Distinct()]);
        foreach (var change in changes)
        {
            var key = KeyOf(change.Link.FollowerKey);
            var links = view.LinksOf(key);
            if (links.AsFollower.FirstOrDefault(change.Link.SameKeys) is not { } registered)
            {
                continue; // ended by this transaction already (the follower key was deleted on the way)
            }

            if (change.Deleted)
            {
                view.SetLinks(key, links.WithoutLeader(registered));
                if (registered.Kind == DependencyKind.Delete)
                {
                    view.Delete(key); // and its own dependencies end, forwarded when this method returns
                }
            }
            else if (registered.Function is { } function)
            {
                var current = view.TryGet(key, out var value) ? value : default;
                view.Put(key, (TValue)function.ApplyUntyped(registered.LeaderKey, change.OldValue, change.NewValue, key, current)!);
            }
        }
    }

    async Task IDependencyEndpoints.ForgetFollowers(TxnContext context, DependencyLink[] links)
    {
        var view = await GetState(context, AccessMode.ReadWrite, [.. links.Select(l => KeyOf(l.LeaderKey)).Distinct()]);
        foreach (var link in links)
        {
            var key = KeyOf(link.LeaderKey);
            view.SetLinks(key, view.LinksOf(key).WithoutFollower(link));
        }
    }

    async Task<LeaderValue> IDependencyEndpoints.RegisterFollower(TxnContext context, DependencyLink link)
    {
        var key = KeyOf(link.LeaderKey);
        if (link.Function is { } function && !function.FitsLeader(typeof(TKey), typeof(TValue)))
        {
            throw new DependencyException($"{link}: its update function {function.GetType().Name} does not take the leader actor's keys ({typeof(TKey).Name}) and values ({typeof(TValue).Name}).");
        }

        var view = await GetState(context, AccessMode.ReadWrite, key);
        if (!view.TryGet(key, out var value))
        {
            throw new DependencyException($"{link}: the leader key does not exist.");
        }

        view.SetLinks(key, view.LinksOf(key).WithFollower(link));
        return new LeaderValue(value);
    }

    async Task<bool> IDependencyEndpoints.Reaches(TxnContext context, ReachQuery query)
    {
        var key = KeyOf(query.Key);
        return await ReachesAsync(context, await GetState(context, AccessMode.Read, key), key, query.Target, query.TargetKey);
    }

    private TKey KeyOf(object key) => key is TKey typed
        ? typed
        : throw new DependencyException($"'{key}' ({key.GetType().Name}) is not a key of actor {Self}, whose keys are {typeof(TKey).Name}.");
}
