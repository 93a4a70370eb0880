using System.Buffers;

namespace Snapper.Logging;

/// <summary>Reads the records of one segment file, cutting a torn tail and refusing any other damage.</summary>
internal static class LogSegmentReader
{
    /// <summary>
    /// Reads every record of <paramref name="path"/> in order. A bad frame that reaches the end of the last segment
    /// is what a crash during a write leaves behind: it is cut off (the file is truncated) and reading ends there.
    /// Anywhere else a bad frame is damage the log cannot explain, and reading stops with
    /// <see cref="LogCorruptedException"/> naming the file and offset, so that no wrong state is loaded. With
    /// <paramref name="headersOnly"/>, records carry only their type, kind and id (no actor or state is decoded):
    /// enough to collect decisions, at a fraction of the cost. A segment of a format newer than
    /// <see cref="LogSegmentFormat.Current"/> is refused with <see cref="LogCorruptedException"/> saying so.
    /// <see cref="LogRecord.Decode(ReadOnlySpan{byte}, int, StateFilter?)"/> copies a state record's bytes only when
    /// <paramref name="keepState"/> (if given) wants them.
    /// </summary>
    public static IEnumerable<LogRecord> Read(string path, bool isLastSegment, bool headersOnly = false, StateFilter? keepState = null)
    {
        // A pooled buffer: a checkpoint reads every segment since the last one twice (decisions, then states), and
        // fresh arrays of segment size each time were most of what it allocated. Records copy what they keep.
        byte[] buffer;
        int length;
        using (var file = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite, bufferSize: 1, FileOptions.SequentialScan))
        {
            length = checked((int)file.Length);
            buffer = ArrayPool<byte>.Shared.Rent(Math.Max(length, 1));
            file.ReadExactly(buffer, 0, length);
        }

        try
        {
            var offset = 0;
            var format = 1;
            if (FormatHeader(buffer, length, out var headerEnd) is { } version)
            {
                if (version > LogSegmentFormat.Current)
                {
                    throw new LogCorruptedException(path, 0,
                        $"the segment is of format {version}, written by a newer Snapper; this one reads formats up to {LogSegmentFormat.Current}");
                }

                format = version;
                offset = headerEnd;
            }

            while (offset < length)
            {
                if (IsZeroFilledFrom(buffer, length, offset))
                {
                    // The preallocated rest of the segment (see Logger): nothing was written here.
                    yield break;
                }

                var problem = NextFrame(buffer, length, offset, headersOnly, keepState, format, out var record, out var frameEnd);
                if (problem is not null)
                {
                    // A torn frame is the last thing written: nothing but preallocated zeros may follow it.
                    if (isLastSegment && (frameEnd >= length || IsZeroFilledFrom(buffer, length, (int)frameEnd)))
                    {
                        using (var file = new FileStream(path, FileMode.Open, FileAccess.Write))
                        {
                            file.SetLength(offset);
                            file.Flush(flushToDisk: true);
                        }

                        yield break;
                    }

                    throw new LogCorruptedException(path, offset, problem);
                }

                yield return record!;
                offset = (int)frameEnd;
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    /// <summary>The segment's format from its header frame, or null for a headerless segment (format 1).</summary>
    private static int? FormatHeader(byte[] buffer, int length, out int headerEnd)
    {
        headerEnd = 0;
        var bytes = buffer.AsSpan(0, length);
        if (IsZeroFilledFrom(buffer, length, 0) || LogFrame.Next(bytes, 0, out var end, out _) is not { IsEmpty: false } first)
        {
            return null;
        }

        headerEnd = (int)end;
        return LogSegmentFormat.VersionOf(first);
    }

    private static bool IsZeroFilledFrom(byte[] buffer, int length, int offset) => !buffer.AsSpan(offset, length - offset).ContainsAnyExcept((byte)0);

    private static string? NextFrame(byte[] buffer, int length, int offset, bool headersOnly, StateFilter? keepState, int format, out LogRecord? record, out long frameEnd)
    {
        record = null;
        var payload = LogFrame.Next(buffer.AsSpan(0, length), offset, out frameEnd, out var problem);
        if (problem is not null)
        {
            return problem;
        }

        record = headersOnly ? LogRecord.DecodeHeader(payload, format) : LogRecord.Decode(payload, format, keepState);
        return record is null ? $"the record does not parse as one of segment format {format}" : null;
    }
}
