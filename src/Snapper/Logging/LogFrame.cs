using System.Buffers.Binary;
using System.IO.Hashing;

namespace Snapper.Logging;

/// <summary>
/// How records sit in a segment file: a header of payload length and CRC-32 of the payload, then the payload. A
/// crash can leave the last frame half written; the checksum tells a torn frame from a whole one.
/// </summary>
internal static class LogFrame
{
    public const int HeaderSize = 8;

    /// <summary>Larger frames are not written, and a header claiming more is damage, not a record.</summary>
    public const int MaxPayload = 256 * 1024 * 1024;

    public static void Write(Stream stream, ReadOnlySpan<byte> payload)
    {
        Span<byte> header = stackalloc byte[HeaderSize];
        BinaryPrimitives.WriteInt32LittleEndian(header, payload.Length);
        BinaryPrimitives.WriteUInt32LittleEndian(header[4..], Crc32.HashToUInt32(payload));
        stream.Write(header);
        stream.Write(payload);
    }

    public static int SizeOf(int payloadLength) => HeaderSize + payloadLength;

    /// <summary>Reads the header at the start of <paramref name="header"/>: the payload length, or -1 if it is not a plausible one.</summary>
    public static int PayloadLength(ReadOnlySpan<byte> header)
    {
        var length = BinaryPrimitives.ReadInt32LittleEndian(header);
        return length is >= 0 and <= MaxPayload ? length : -1;
    }

    public static bool ChecksumMatches(ReadOnlySpan<byte> header, ReadOnlySpan<byte> payload) =>
        BinaryPrimitives.ReadUInt32LittleEndian(header[4..]) == Crc32.HashToUInt32(payload);

    /// <summary>
    /// The payload of the frame at <paramref name="offset"/>, or a description of why there is no whole frame there.
    /// <paramref name="frameEnd"/> is where the frame ends (<see cref="long.MaxValue"/> if even its header is unreadable).
    /// </summary>
    public static ReadOnlySpan<byte> Next(ReadOnlySpan<byte> bytes, int offset, out long frameEnd, out string? problem)
    {
        problem = null;
        frameEnd = long.MaxValue;
        if (bytes.Length - offset < HeaderSize)
        {
            problem = "the frame header is cut short";
            return default;
        }

        var header = bytes.Slice(offset, HeaderSize);
        var length = PayloadLength(header);
        if (length < 0)
        {
            problem = "the frame header holds an impossible length";
            return default;
        }

        frameEnd = (long)offset + SizeOf(length);
        if (frameEnd > bytes.Length)
        {
            problem = "the frame is cut short";
            return default;
        }

        var payload = bytes.Slice(offset + HeaderSize, length);
        if (!ChecksumMatches(header, payload))
        {
            problem = "the checksum does not match";
            return default;
        }

        return payload;
    }
}
