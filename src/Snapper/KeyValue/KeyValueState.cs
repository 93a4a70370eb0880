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
    /// <summary>The space of user keys in the log's entries (dependency entries have their own).</summary>
    internal const byte UserKeys = 0;

    // Neither serialized nor copied (no [Id]): what this version changed since it was copied, and what its changes are
    // relative to (see IIncrementallyLogged). A copy starts with no changes; the copier leaves the flags false, which
    // is the safe default (log the whole state) until ContinueFrom says otherwise.
    [NonSerialized]
    private HashSet<TKey>? _changed;

    [NonSerialized]
    private bool _baseInLog;

    [NonSerialized]
    private bool _loggedWhole;

    [Id(0)]
    internal Dictionary<TKey, TValue> Entries { get; set; } = new();

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
        foreach (var entry in entries.Where(e => e.Space == UserKeys))
        {
            state.Entries[serializer.Deserialize<TKey>(entry.Key)!] = serializer.Deserialize<TValue>(entry.Value!)!;
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

    byte[] IIncrementallyLogged.EncodeForLog(Serializer serializer)
    {
        if (!_baseInLog)
        {
            _loggedWhole = true;
            return KeyedEntries.Encode(whole: true, [.. Entries.Select(e => Entry(serializer, e.Key, present: true))]);
        }

        return KeyedEntries.Encode(whole: false, [.. (_changed ?? []).Select(key => Entry(serializer, key, Entries.ContainsKey(key)))]);
    }

    void IIncrementallyLogged.ContinueFrom(object source)
    {
        var from = (KeyValueState<TKey, TValue>)source;
        _baseInLog = from._baseInLog || from._loggedWhole;
        _changed = null;
    }

    private KeyedEntry Entry(Serializer serializer, TKey key, bool present) =>
        new(UserKeys, serializer.SerializeToArray(key), present ? serializer.SerializeToArray(Entries[key]) : null);
}
