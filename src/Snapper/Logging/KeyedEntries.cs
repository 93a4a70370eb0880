using System.Buffers.Binary;

namespace Snapper.Logging;

/// <summary>
/// The log form of a key-value actor's state, and of what one transaction or batch changed in it (incremental logging,
/// thesis §5.3.3.2): entries of (space, key, value), where a missing value deletes the key. Keys and values are
/// Orleans-serialized by the actor; the log compares keys by their bytes, so it can fold changes onto a checkpoint's
/// image without knowing the actor's types. That needs equal keys to serialize to equal bytes, which Orleans'
/// serializer gives for a key's declared type (a key of a derived type would carry its type name: key types are
/// records or primitives, see <c>KeyValueActor</c>).
/// </summary>
/// <remarks>
/// Payload: a flags byte (<see cref="WholeFlag"/>: the entries are the whole state, replacing whatever was before;
/// without it they change the state before; <see cref="KeyOrderedFlag"/>, segment format 3: see there), an int32 count, then per entry a space byte, an int32 key length, the key,
/// an int32 value length (-1: deleted) and the value. Spaces keep system entries (dependencies) apart from user keys.
/// </remarks>
internal static class KeyedEntries
{
    public const byte WholeFlag = 1;

    /// <summary>
    /// Changes of a transaction that held only its keys of a key-level actor (an ACT with per-key locks): other
    /// transactions changed other keys of the actor meanwhile, and may have logged larger seqs first. Its seq orders it
    /// only among the records of its own keys (a key's writers hold its lock one after the other, each until its commit
    /// is logged), so the log applies it even below the actor's seq so far (<see cref="RecoveredActor.Advance"/>).
    /// </summary>
    public const byte KeyOrderedFlag = 2;

    /// <summary>
    /// The log bytes of <paramref name="entries"/>; <paramref name="whole"/> if they are the whole state,
    /// <paramref name="keyOrdered"/> if they are changes ordered per key (<see cref="KeyOrderedFlag"/>).
    /// </summary>
    public static byte[] Encode(bool whole, IReadOnlyCollection<KeyedEntry> entries, bool keyOrdered = false)
    {
        var length = 5 + entries.Sum(e => 1 + 4 + e.Key.Length + 4 + (e.Value?.Length ?? 0));
        var bytes = new byte[length];
        bytes[0] = whole ? WholeFlag : keyOrdered ? KeyOrderedFlag : (byte)0;
        BinaryPrimitives.WriteInt32LittleEndian(bytes.AsSpan(1), entries.Count);
        var at = 5;
        foreach (var entry in entries)
        {
            bytes[at++] = entry.Space;
            BinaryPrimitives.WriteInt32LittleEndian(bytes.AsSpan(at), entry.Key.Length);
            entry.Key.CopyTo(bytes, at + 4);
            at += 4 + entry.Key.Length;
            BinaryPrimitives.WriteInt32LittleEndian(bytes.AsSpan(at), entry.Value?.Length ?? -1);
            at += 4;
            if (entry.Value is { } value)
            {
                value.CopyTo(bytes, at);
                at += value.Length;
            }
        }

        return bytes;
    }

    /// <summary>Whether a payload of <see cref="Encode"/> holds the whole state (rather than changes).</summary>
    public static bool IsWhole(ReadOnlySpan<byte> bytes) => bytes.Length > 0 && bytes[0] == WholeFlag;

    /// <summary>Whether a payload of <see cref="Encode"/> holds changes ordered per key (<see cref="KeyOrderedFlag"/>).</summary>
    public static bool IsKeyOrdered(ReadOnlySpan<byte> bytes) => bytes.Length > 0 && bytes[0] == KeyOrderedFlag;

    /// <summary>Whether <paramref name="record"/> is a change record ordered per key, which applies even below its actor's seq so far.</summary>
    public static bool IsKeyOrdered(LogRecord record) => record.Type == LogRecordType.StateChanged && IsKeyOrdered(record.State);

    /// <summary>Reads log bytes written by <see cref="Encode"/>.</summary>
    /// <exception cref="FormatException">The bytes are not such a payload.</exception>
    public static (bool Whole, List<KeyedEntry> Entries) Decode(ReadOnlySpan<byte> bytes)
    {
        if (bytes.Length < 5 || bytes[0] > KeyOrderedFlag)
        {
            throw new FormatException("a key-value state record has no valid header");
        }

        var count = BinaryPrimitives.ReadInt32LittleEndian(bytes[1..]);
        if (count < 0 || count > bytes.Length)
        {
            throw new FormatException($"a key-value state record claims {count} entries");
        }

        var entries = new List<KeyedEntry>(count);
        var at = 5;
        for (var i = 0; i < count; i++)
        {
            if (bytes.Length < at + 9)
            {
                throw new FormatException("a key-value state record ends inside an entry");
            }

            var space = bytes[at];
            var keyLength = BinaryPrimitives.ReadInt32LittleEndian(bytes[(at + 1)..]);
            if (keyLength < 0 || bytes.Length < at + 5 + keyLength + 4)
            {
                throw new FormatException("a key-value state record holds a key longer than the record");
            }

            var key = bytes.Slice(at + 5, keyLength).ToArray();
            at += 5 + keyLength;
            var valueLength = BinaryPrimitives.ReadInt32LittleEndian(bytes[at..]);
            at += 4;
            if (valueLength < -1 || bytes.Length < at + Math.Max(valueLength, 0))
            {
                throw new FormatException("a key-value state record holds a value longer than the record");
            }

            var value = valueLength < 0 ? null : bytes.Slice(at, valueLength).ToArray();
            at += Math.Max(valueLength, 0);
            entries.Add(new KeyedEntry(space, key, value));
        }

        return at == bytes.Length ? (bytes[0] == WholeFlag, entries) : throw new FormatException("a key-value state record has bytes after its last entry");
    }

    /// <summary>
    /// The whole state that results from applying <paramref name="changes"/> (log payloads, in the actor's version order)
    /// to <paramref name="image"/> (a whole state, or null for an actor with no state logged before them).
    /// </summary>
    /// <exception cref="FormatException">A payload is not a key-value state record.</exception>
    public static byte[] Apply(byte[]? image, IEnumerable<byte[]> changes)
    {
        var state = new Dictionary<KeyedEntry.Identity, byte[]>();
        void Fold(byte[] payload)
        {
            var (whole, entries) = Decode(payload);
            if (whole)
            {
                state.Clear();
            }

            foreach (var entry in entries)
            {
                if (entry.Value is null)
                {
                    state.Remove(entry.Id);
                }
                else
                {
                    state[entry.Id] = entry.Value;
                }
            }
        }

        if (image is not null)
        {
            Fold(image);
        }

        foreach (var change in changes)
        {
            Fold(change);
        }

        return Encode(whole: true, [.. state.Select(e => new KeyedEntry(e.Key.Space, e.Key.Key, e.Value))]);
    }
}

/// <summary>One entry of <see cref="KeyedEntries"/>: a key of a space and its value, or null for a deleted key.</summary>
internal readonly record struct KeyedEntry(byte Space, byte[] Key, byte[]? Value)
{
    public Identity Id => new(Space, Key);

    /// <summary>A key compared by its space and bytes.</summary>
    public readonly struct Identity(byte space, byte[] key) : IEquatable<Identity>
    {
        public byte Space { get; } = space;

        public byte[] Key { get; } = key;

        public bool Equals(Identity other) => Space == other.Space && Key.AsSpan().SequenceEqual(other.Key);

        public override bool Equals(object? obj) => obj is Identity other && Equals(other);

        public override int GetHashCode()
        {
            var hash = new HashCode();
            hash.Add(Space);
            hash.AddBytes(Key);
            return hash.ToHashCode();
        }
    }
}
