using Orleans.Serialization;
using Snapper.Logging;

namespace Snapper.KeyValue;

/// <summary>
/// The state of a <see cref="KeyValueActor{TKey, TValue}"/> as Snapper keeps, copies, versions and logs it: the actor's
/// keys and values. User code reaches it only through the per-transaction <see cref="DictionaryState{TKey, TValue}"/>.
/// </summary>
/// <remarks>
/// The keys and values must be types Orleans can serialize and copy (mark them <c>[GenerateSerializer]</c>). A version
/// is logged incrementally: only the keys it changed since the version it was copied from (thesis §5.3.3.2).
/// </remarks>
[GenerateSerializer, Alias("snapper.kv-state`2")]
public sealed class KeyValueState<TKey, TValue> : IIncrementallyLogged
    where TKey : notnull
{
    /// <summary>The space of user keys in the log's entries.</summary>
    internal const byte UserKeys = 0;

    /// <summary>The space of dependency entries in the log's entries: a key and its <see cref="KeyLinks"/>.</summary>
    internal const byte DependencyKeys = 1;

    // Neither serialized nor copied (no [Id]): what this version changed since it was copied, and what its changes are
    // relative to (see IIncrementallyLogged). A copy starts with no changes; the copier leaves the flags false, which
    // is the safe default (log the whole state) until ContinueFrom says otherwise.
    [NonSerialized]
    private HashSet<TKey>? _changed;

    [NonSerialized]
    private HashSet<TKey>? _changedLinks;

    [NonSerialized]
    private bool _baseInLog;

    [NonSerialized]
    private bool _loggedWhole;

    [Id(0)]
    internal Dictionary<TKey, TValue> Entries { get; set; } = new();

    /// <summary>The dependencies of keys that have some (thesis §5.2.2), as leader or follower.</summary>
    [Id(1)]
    internal Dictionary<TKey, KeyLinks> Links { get; set; } = new();

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

        var state = new KeyValueState<TKey, TValue> { _baseInLog = true };
        foreach (var entry in entries)
        {
            var key = serializer.Deserialize<TKey>(entry.Key)!;
            if (entry.Space == DependencyKeys)
            {
                state.Links[key] = serializer.Deserialize<KeyLinks>(entry.Value!)!;
            }
            else
            {
                state.Entries[key] = serializer.Deserialize<TValue>(entry.Value!)!;
            }
        }

        return state;
    }

    /// <summary>Sets <paramref name="key"/>, remembering it as changed by this version.</summary>
    internal void Set(TKey key, TValue value)
    {
        Entries[key] = value;
        (_changed ??= []).Add(key);
    }

    /// <summary>Deletes <paramref name="key"/>, remembering it as changed by this version; false if it did not exist.</summary>
    internal bool Remove(TKey key)
    {
        if (!Entries.Remove(key))
        {
            return false;
        }

        (_changed ??= []).Add(key);
        return true;
    }

    /// <summary>The dependencies of <paramref name="key"/> (none if it has none).</summary>
    internal KeyLinks LinksOf(TKey key) => Links.GetValueOrDefault(key) ?? KeyLinks.None;

    /// <summary>Replaces the dependencies of <paramref name="key"/>, remembering the key's links as changed by this version.</summary>
    internal void SetLinks(TKey key, KeyLinks links)
    {
        if (links.IsEmpty)
        {
            Links.Remove(key);
        }
        else
        {
            Links[key] = links;
        }

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
            .. (_changedLinks ?? []).Select(key => LinksEntry(serializer, key))]);
    }

    void IIncrementallyLogged.ContinueFrom(object source)
    {
        var from = (KeyValueState<TKey, TValue>)source;
        _baseInLog = from._baseInLog || from._loggedWhole;
        _changed = null;
        _changedLinks = null;
    }

    private KeyedEntry Entry(Serializer serializer, TKey key) =>
        new(UserKeys, serializer.SerializeToArray(key), Entries.TryGetValue(key, out var value) ? serializer.SerializeToArray(value) : null);

    private KeyedEntry LinksEntry(Serializer serializer, TKey key) =>
        new(DependencyKeys, serializer.SerializeToArray(key), Links.TryGetValue(key, out var links) ? serializer.SerializeToArray(links) : null);
}
