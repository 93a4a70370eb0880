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
    /// enough to collect decisions, at a fraction of the cost.
    /// </summary>
    public static IEnumerable<LogRecord> Read(string path, bool isLastSegment, bool headersOnly = false)
    {
        var bytes = File.ReadAllBytes(path);
        var offset = 0;
        while (offset < bytes.Length)
        {
            if (IsZeroFilledFrom(bytes, offset))
            {
                // The preallocated rest of the segment (see Logger): nothing was written here.
                yield break;
            }

            var problem = NextFrame(bytes, offset, headersOnly, out var record, out var frameEnd);
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

    private static string? NextFrame(byte[] bytes, int offset, bool headersOnly, out LogRecord? record, out long frameEnd)
    {
        record = null;
        var payload = LogFrame.Next(bytes, offset, out frameEnd, out var problem);
        if (problem is not null)
        {
            return problem;
        }

        record = headersOnly ? LogRecord.DecodeHeader(payload) : LogRecord.Decode(payload);
        return record is null ? "the record does not parse" : null;
    }
}
