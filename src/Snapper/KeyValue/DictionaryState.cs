using System.Diagnostics.CodeAnalysis;

namespace Snapper.KeyValue;

/// <summary>
/// One transaction's view of a key-value actor's state (thesis §5.2.1, §5.3.3.3): the keys it acquired with
/// <c>GetState</c>, each for reading or for reading and writing. Every <c>GetState</c> of the transaction on the actor
/// returns this same object, extended by the keys that call named; a key used before it is acquired, or written when
/// acquired for reading, fails with <see cref="KeyNotAcquiredException"/> (and the transaction aborts).
/// </summary>
/// <remarks>
/// Changes go to the transaction's own copy of the state and become visible to others only if it commits. Values are
/// handed out as stored: change a value only through <see cref="Put"/> (a value changed in place is not a write, and a
/// value read under <see cref="AccessMode.Read"/> is shared with other transactions).
/// </remarks>
public sealed class DictionaryState<TKey, TValue>
    where TKey : notnull
{
    private readonly Dictionary<TKey, AccessMode> _acquired = new();

    // What the method running now changed (the operation log of thesis Fig. 5.2b), drained when it finishes to forward
    // changes of leader keys: the value each changed key had before the method, and the dependencies of keys it deleted.
    private readonly Dictionary<TKey, (bool Existed, TValue? Value)> _changedBefore = new();
    private readonly List<DependencyLink> _linksOfDeleted = [];
    private readonly string _actor;
    private KeyValueState<TKey, TValue> _state;
    private AccessMode? _all;

    internal DictionaryState(string actor, KeyValueState<TKey, TValue> state)
    {
        _actor = actor;
        _state = state;
    }

    /// <summary>The keys acquired so far, with their access (all keys are acquired when <see cref="AllKeys"/> is set).</summary>
    public IReadOnlyDictionary<TKey, AccessMode> Acquired => _acquired;

    /// <summary>The access to every key, if the transaction acquired the whole collection; else null.</summary>
    public AccessMode? AllKeys => _all;

    /// <summary>The value of <paramref name="key"/>, if it exists.</summary>
    /// <exception cref="KeyNotAcquiredException">The key was not acquired.</exception>
    public bool TryGet(TKey key, [MaybeNullWhen(false)] out TValue value)
    {
        Require(key, AccessMode.Read);
        return _state.Entries.TryGetValue(key, out value);
    }

    /// <summary>The value of <paramref name="key"/>.</summary>
    /// <exception cref="KeyNotFoundException">The key does not exist.</exception>
    /// <exception cref="KeyNotAcquiredException">The key was not acquired.</exception>
    public TValue Get(TKey key) => TryGet(key, out var value)
        ? value
        : throw new KeyNotFoundException($"Key '{key}' does not exist on actor {_actor}.");

    /// <summary>Whether <paramref name="key"/> exists.</summary>
    /// <exception cref="KeyNotAcquiredException">The key was not acquired.</exception>
    public bool ContainsKey(TKey key)
    {
        Require(key, AccessMode.Read);
        return _state.Entries.ContainsKey(key);
    }

    /// <summary>Sets <paramref name="key"/> to <paramref name="value"/>, creating the key if it does not exist.</summary>
    /// <exception cref="KeyNotAcquiredException">The key was not acquired for <see cref="AccessMode.ReadWrite"/>.</exception>
    /// <remarks>If the key leads update dependencies, its followers are updated when the method finishes.</remarks>
    public void Put(TKey key, TValue value)
    {
        Require(key, AccessMode.ReadWrite);
        RememberBefore(key);
        _state.Set(key, value);
    }

    /// <summary>Deletes <paramref name="key"/>; false if it did not exist.</summary>
    /// <remarks>
    /// A deleted key ends every dependency it had (thesis §5.2.2.2): when the method finishes, its delete followers are
    /// deleted, its update followers stop following it, and its leaders forget it.
    /// </remarks>
    /// <exception cref="KeyNotAcquiredException">The key was not acquired for <see cref="AccessMode.ReadWrite"/>.</exception>
    public bool Delete(TKey key)
    {
        Require(key, AccessMode.ReadWrite);
        RememberBefore(key);
        var links = _state.LinksOf(key);
        if (!links.IsEmpty)
        {
            _linksOfDeleted.AddRange(links.AsLeader);
            _linksOfDeleted.AddRange(links.AsFollower);
            _state.SetLinks(key, KeyLinks.None);
        }

        return _state.Remove(key);
    }

    /// <summary>The dependencies of <paramref name="key"/>: those where it leads and those where it follows.</summary>
    /// <exception cref="KeyNotAcquiredException">The key was not acquired.</exception>
    public IReadOnlyList<Dependency> DependenciesOf(TKey key)
    {
        Require(key, AccessMode.Read);
        var links = _state.LinksOf(key);
        return [.. links.AsLeader.Concat(links.AsFollower).Select(l => l.ToPublic())];
    }

    /// <summary>The dependencies of an acquired key, as stored.</summary>
    internal KeyLinks LinksOf(TKey key)
    {
        Require(key, AccessMode.Read);
        return _state.LinksOf(key);
    }

    /// <summary>Replaces the dependencies of a key acquired for writing (registration, de-registration, a leader's deletion).</summary>
    internal void SetLinks(TKey key, KeyLinks links)
    {
        Require(key, AccessMode.ReadWrite);
        _state.SetLinks(key, links);
    }

    /// <summary>
    /// What to forward for the changes made since the last call (thesis §5.3.3.1 step 12): for each key that was
    /// updated and leads update dependencies, its change per follower; for each deleted key, the end of each of its
    /// dependencies. Clears the operation log.
    /// </summary>
    internal (List<LeaderChange> ToFollowers, List<DependencyLink> ToLeaders) TakeForwards(GrainId self)
    {
        var toFollowers = new List<LeaderChange>();
        var toLeaders = new List<DependencyLink>();
        foreach (var (key, before) in _changedBefore)
        {
            if (before.Existed && _state.Entries.TryGetValue(key, out var now))
            {
                toFollowers.AddRange(_state.LinksOf(key).AsLeader
                    .Where(link => link.Kind == DependencyKind.Update)
                    .Select(link => new LeaderChange(link, Deleted: false, before.Value, now)));
            }
        }

        foreach (var link in _linksOfDeleted)
        {
            if (link.Leader == self)
            {
                toFollowers.Add(new LeaderChange(link, Deleted: true, null, null));
            }
            else
            {
                toLeaders.Add(link);
            }
        }

        _changedBefore.Clear();
        _linksOfDeleted.Clear();
        return (toFollowers, toLeaders);
    }

    private void RememberBefore(TKey key)
    {
        if (!_changedBefore.ContainsKey(key))
        {
            _changedBefore[key] = _state.Entries.TryGetValue(key, out var value) ? (true, value) : (false, default);
        }
    }

    /// <summary>Every key and value of the actor.</summary>
    /// <exception cref="KeyNotAcquiredException">The transaction did not acquire the whole collection (<c>GetState(ctx, mode)</c>).</exception>
    public IReadOnlyDictionary<TKey, TValue> Entries => _all is not null
        ? _state.Entries
        : throw new KeyNotAcquiredException(_actor, "*", "enumerating the collection needs the whole collection acquired: call GetState(ctx, mode).");

    /// <summary>Adds keys the transaction now holds; <paramref name="state"/> is the state it may now use (its own copy once it writes).</summary>
    internal void Extend(IEnumerable<KeyValuePair<TKey, AccessMode>> keys, KeyValueState<TKey, TValue> state)
    {
        _state = state;
        foreach (var (key, mode) in keys)
        {
            if (!_acquired.TryGetValue(key, out var held) || held < mode)
            {
                _acquired[key] = mode;
            }
        }
    }

    /// <summary>The transaction now holds the whole collection in <paramref name="mode"/>.</summary>
    internal void ExtendToAll(AccessMode mode, KeyValueState<TKey, TValue> state)
    {
        _state = state;
        _all = _all is { } held && held > mode ? held : mode;
    }

    /// <summary>The strongest access the transaction holds for any key (what its state was last acquired with).</summary>
    internal AccessMode Strongest => _all == AccessMode.ReadWrite || _acquired.ContainsValue(AccessMode.ReadWrite) ? AccessMode.ReadWrite : AccessMode.Read;

    private void Require(TKey key, AccessMode mode)
    {
        AccessMode? held = _acquired.TryGetValue(key, out var own) ? own : null;
        if (_all is { } all && (held is null || held < all))
        {
            held = all;
        }

        if (held is null || held < mode)
        {
            throw new KeyNotAcquiredException(_actor, key.ToString() ?? "", held is null
                ? "not acquired by this transaction: name it in GetState first."
                : "acquired for reading only: name it with AccessMode.ReadWrite in GetState to write it.");
        }
    }
}
