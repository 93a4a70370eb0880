using System.Collections.Immutable;
using Orleans.Serialization;
using Snapper.Logging;

namespace Snapper.KeyValue;

/// <summary>
/// The state of a <see cref="KeyValueActor{TKey, TValue}"/> as Snapper keeps, copies, versions and logs it: the actor's
/// keys and values. User code reaches it only through the per-transaction <see cref="DictionaryState{TKey, TValue}"/>.
/// </summary>
/// <remarks>
/// The keys and values must be types Orleans can serialize (mark them <c>[GenerateSerializer]</c>). A version is logged
/// incrementally: only the keys it changed since the version it was copied from (thesis §5.3.3.2). Keys, values and
/// dependencies are kept in immutable maps, so a transaction's (a batch's) own version is made in constant time whatever
/// the actor holds, and a write costs O(log n): values are shared between versions, never copied, which is why a value
/// must only ever be replaced (<c>Put</c>), not changed in place.
/// </remarks>
[GenerateSerializer, Alias("snapper.kv-state`2")]
public sealed class KeyValueState<TKey, TValue> : IIncrementallyLogged, Scheduling.IKeyedVersion
    where TKey : notnull
{
    /// <summary>The space of user keys in the log's entries.</summary>
    internal const byte UserKeys = 0;

    /// <summary>The space of dependency entries in the log's entries: a key and its <see cref="KeyLinks"/>.</summary>
    internal const byte DependencyKeys = 1;

    // Not serialized: what this version changed since it was made from the one before, and what its changes are
    // relative to (see IIncrementallyLogged). A deserialized state (a migration) has the flags false, the safe default:
    // its first version logs the whole state.
    [NonSerialized]
    private HashSet<TKey>? _changed;

    [NonSerialized]
    private HashSet<TKey>? _changedLinks;

    [NonSerialized]
    private bool _baseInLog;

    [NonSerialized]
    private bool _loggedWhole;

    [NonSerialized]
    private bool _keyOrdered;

    [NonSerialized]
    private ImmutableDictionary<TKey, TValue>? _entries;

    /// <summary>The keys and values as a state serialized by an earlier Snapper held them (read once, then moved to <see cref="Entries"/>).</summary>
    [Id(0)]
    internal Dictionary<TKey, TValue>? LegacyEntries { get; set; }

    /// <summary>The keys and values.</summary>
    [Id(2)]
    internal ImmutableDictionary<TKey, TValue> Entries
    {
        get
        {
            if (LegacyEntries is { } legacy)
            {
                _entries = legacy.ToImmutableDictionary();
                LegacyEntries = null;
            }

            return _entries ??= ImmutableDictionary<TKey, TValue>.Empty;
        }

        set => _entries = value;
    }

    /// <summary>The dependencies of keys that have some (thesis §5.2.2), as leader or follower.</summary>
    [Id(3)]
    internal ImmutableDictionary<TKey, KeyLinks> Links { get; set; } = ImmutableDictionary<TKey, KeyLinks>.Empty;

    /// <summary>The state of an actor no transaction has written: empty, which is also what the log holds before its first record.</summary>
    internal static KeyValueState<TKey, TValue> Empty() => new() { _baseInLog = true };

    /// <summary>The state a log image (<see cref="KeyedEntries"/>, whole) describes.</summary>
    /// <exception cref="FormatException">The image is not a whole key-value state.</exception>
    internal static KeyValueState<TKey, TValue> FromLog(byte[] image, Serializer serializer)
    {
        var (whole, entries) = KeyedEntries.Decode(image);
        if (!whole)
        {
            throw new FormatException("a recovered key-value image is not a whole state");
        }

        var values = ImmutableDictionary.CreateBuilder<TKey, TValue>();
        var links = ImmutableDictionary.CreateBuilder<TKey, KeyLinks>();
        foreach (var entry in entries)
        {
            var key = serializer.Deserialize<TKey>(entry.Key)!;
            if (entry.Space == DependencyKeys)
            {
                links[key] = serializer.Deserialize<KeyLinks>(entry.Value!)!;
            }
            else
            {
                values[key] = serializer.Deserialize<TValue>(entry.Value!)!;
            }
        }

        return new KeyValueState<TKey, TValue> { _baseInLog = true, Entries = values.ToImmutable(), Links = links.ToImmutable() };
    }

    /// <summary>Sets <paramref name="key"/>, remembering it as changed by this version.</summary>
    internal void Set(TKey key, TValue value)
    {
        Entries = Entries.SetItem(key, value);
        (_changed ??= []).Add(key);
    }

    /// <summary>Deletes <paramref name="key"/>, remembering it as changed by this version; false if it did not exist.</summary>
    internal bool Remove(TKey key)
    {
        var entries = Entries;
        if (!entries.ContainsKey(key))
        {
            return false;
        }

        Entries = entries.Remove(key);
        (_changed ??= []).Add(key);
        return true;
    }

    /// <summary>The dependencies of <paramref name="key"/> (none if it has none).</summary>
    internal KeyLinks LinksOf(TKey key) => Links.GetValueOrDefault(key) ?? KeyLinks.None;

    /// <summary>Replaces the dependencies of <paramref name="key"/>, remembering the key's links as changed by this version.</summary>
    internal void SetLinks(TKey key, KeyLinks links)
    {
        Links = links.IsEmpty ? Links.Remove(key) : Links.SetItem(key, links);

        (_changedLinks ??= []).Add(key);
    }

    byte[] IIncrementallyLogged.EncodeForLog(Serializer serializer)
    {
        if (!_baseInLog)
        {
            _loggedWhole = true;
            return KeyedEntries.Encode(whole: true, [
                .. Entries.Keys.Select(key => Entry(serializer, key)),
                .. Links.Keys.Select(key => LinksEntry(serializer, key))]);
        }

        return KeyedEntries.Encode(whole: false, [
            .. (_changed ?? []).Select(key => Entry(serializer, key)),
            .. (_changedLinks ?? []).Select(key => LinksEntry(serializer, key))], _keyOrdered);
    }

    /// <summary>A new version sharing this one's maps (constant time), with no changes yet, whose base is this version.</summary>
    object IIncrementallyLogged.NewVersion() => NewVersion();

    object Scheduling.IKeyedVersion.NewVersion() => NewVersion();

    bool Scheduling.IKeyedVersion.BaseInLog => _baseInLog || _loggedWhole;

    void Scheduling.IKeyedVersion.OrderPerKey() => _keyOrdered = true;

    bool Scheduling.IKeyedVersion.HasChanges => _changed is { Count: > 0 } || _changedLinks is { Count: > 0 };

    void Scheduling.IKeyedVersion.TakeKeys(object source, IEnumerable<object> keys)
    {
        var from = (KeyValueState<TKey, TValue>)source;
        foreach (var key in keys.Cast<TKey>())
        {
            Entries = from.Entries.TryGetValue(key, out var value) ? Entries.SetItem(key, value) : Entries.Remove(key);
            Links = from.Links.TryGetValue(key, out var links) ? Links.SetItem(key, links) : Links.Remove(key);
        }
    }

    void Scheduling.IKeyedVersion.ApplyChangesTo(object target)
    {
        var to = (KeyValueState<TKey, TValue>)target;
        foreach (var key in _changed ?? [])
        {
            if (Entries.TryGetValue(key, out var value))
            {
                to.Set(key, value);
            }
            else
            {
                // Marked even if the target does not have it: the target may be a batch's version whose other keys are
                // older than this one's, and the deletion must still reach the log and the committed state.
                to.Entries = to.Entries.Remove(key);
                (to._changed ??= []).Add(key);
            }
        }

        foreach (var key in _changedLinks ?? [])
        {
            to.SetLinks(key, LinksOf(key));
        }
    }

    private KeyValueState<TKey, TValue> NewVersion() => new()
    {
        Entries = Entries,
        Links = Links,
        _baseInLog = _baseInLog || _loggedWhole,
    };

    private KeyedEntry Entry(Serializer serializer, TKey key) =>
        new(UserKeys, serializer.SerializeToArray(key), Entries.TryGetValue(key, out var value) ? serializer.SerializeToArray(value) : null);

    private KeyedEntry LinksEntry(Serializer serializer, TKey key) =>
        new(DependencyKeys, serializer.SerializeToArray(key), Links.TryGetValue(key, out var links) ? serializer.SerializeToArray(links) : null);
}
