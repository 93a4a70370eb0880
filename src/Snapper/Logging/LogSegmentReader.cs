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
    /// </summary>
    public static IEnumerable<LogRecord> Read(string path, bool isLastSegment, bool headersOnly = false)
    {
        var bytes = File.ReadAllBytes(path);
        var offset = 0;
        var format = 1;
        if (!IsZeroFilledFrom(bytes, 0) && LogFrame.Next(bytes, 0, out var headerEnd, out _) is { IsEmpty: false } first
            && LogSegmentFormat.VersionOf(first) is { } version)
        {
            if (version > LogSegmentFormat.Current)
            {
                throw new LogCorruptedException(path, 0,
                    $"the segment is of format {version}, written by a newer Snapper; this one reads formats up to {LogSegmentFormat.Current}");
            }

            format = version;
            offset = (int)headerEnd;
        }

        while (offset < bytes.Length)
        {
            if (IsZeroFilledFrom(bytes, offset))
            {
                // The preallocated rest of the segment (see Logger): nothing was written here.
                yield break;
            }

            var problem = NextFrame(bytes, offset, headersOnly, format, out var record, out var frameEnd);
            if (problem is not null)
            {
                // A torn frame is the last thing written: nothing but preallocated zeros may follow it.
                if (isLastSegment && (frameEnd >= bytes.Length || IsZeroFilledFrom(bytes, (int)frameEnd)))
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

    private static bool IsZeroFilledFrom(byte[] bytes, int offset) => !bytes.AsSpan(offset).ContainsAnyExcept((byte)0);

    private static string? NextFrame(byte[] bytes, int offset, bool headersOnly, int format, out LogRecord? record, out long frameEnd)
    {
        record = null;
        var payload = LogFrame.Next(bytes, offset, out frameEnd, out var problem);
        if (problem is not null)
        {
            return problem;
        }

        record = headersOnly ? LogRecord.DecodeHeader(payload, format) : LogRecord.Decode(payload, format);
        return record is null ? $"the record does not parse as one of segment format {format}" : null;
    }
}
