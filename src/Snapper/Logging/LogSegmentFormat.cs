using System.Buffers.Binary;

namespace Snapper.Logging;

/// <summary>
/// The format version of a segment file, in a header frame at its start, so that a reader can tell a segment written
/// by a newer Snapper (refused with a clear message) from damage. Format 1 segments have no header (they were written
/// before it existed) and know record types 1-5; format 2 adds <see cref="LogRecordType.StateChanged"/>; format 3 adds
/// change records ordered per key (<see cref="KeyedEntries.KeyOrderedFlag"/>), which an older reader would take for damage.
/// </summary>
internal static class LogSegmentFormat
{
    public const int Current = 3;

    // "SNPRSEG" and a zero, then the version: no record starts so (a record's first byte is its type, 1-6).
    private static ReadOnlySpan<byte> Magic => "SNPRSEG\0"u8;

    /// <summary>The payload of the header frame that starts every segment written now.</summary>
    public static byte[] Header()
    {
        var payload = new byte[Magic.Length + 4];
        Magic.CopyTo(payload);
        BinaryPrimitives.WriteInt32LittleEndian(payload.AsSpan(Magic.Length), Current);
        return payload;
    }

    /// <summary>The version a segment's first frame declares, or null if that frame is a record (a format 1 segment).</summary>
    public static int? VersionOf(ReadOnlySpan<byte> firstPayload) =>
        firstPayload.Length == Magic.Length + 4 && firstPayload.StartsWith(Magic)
            ? BinaryPrimitives.ReadInt32LittleEndian(firstPayload[Magic.Length..])
            : null;
}
