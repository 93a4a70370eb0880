using Microsoft.Extensions.Logging.Abstractions;
using Snapper.Diagnostics;
using Snapper.Logging;
using Xunit;

namespace Snapper.Tests.Durability;

/// <summary>Segment files on their own: group commit writes, read back, a torn tail is cut, other damage is refused.</summary>
public sealed class LogFileTests : IDisposable
{
    private readonly string _folder = Directory.CreateTempSubdirectory("snapper-log-").FullName;

    public void Dispose() => Directory.Delete(_folder, recursive: true);

    private static readonly GrainId Actor = GrainId.Create("account", "7");

    private async Task<string> WriteSegment(int records)
    {
        await using (var logger = new Logger(_folder, 0, fsync: true, segmentBytes: 1 << 20, new SnapperMetrics(), NullLogger.Instance))
        {
            // Concurrent appends: group commit may merge them, but each keeps its records together and in order.
            await Task.WhenAll(Enumerable.Range(0, records).Select(i => logger.AppendAsync(Logger.Encode([
                LogRecord.StateWritten(LoggedTxnKind.Act, i, Actor, i, [(byte)i, 1, 2, 3]),
                LogRecord.Committed(LoggedTxnKind.Act, i)]))));
        }

        return Assert.Single(Logger.Segments(_folder));
    }

    /// <summary>The frame of the format header every segment starts with.</summary>
    private static readonly int SegmentHeader = LogFrame.SizeOf(LogSegmentFormat.Header().Length);

    [Fact]
    public async Task Appended_records_read_back_whole_and_in_append_order()
    {
        var segment = await WriteSegment(200);

        var records = LogSegmentReader.Read(segment, isLastSegment: true).ToList();

        Assert.Equal(400, records.Count);
        for (var i = 0; i < records.Count; i += 2)
        {
            Assert.Equal(LogRecordType.StateWritten, records[i].Type);
            Assert.Equal(Actor.ToString(), records[i].Actor);
            Assert.Equal(records[i].Id, records[i + 1].Id);
            Assert.Equal(LogRecordType.Committed, records[i + 1].Type);
        }
    }

    [Fact]
    public async Task Records_appended_without_a_completion_are_durable_once_a_later_awaited_append_is()
    {
        await using (var logger = new Logger(_folder, 0, fsync: true, segmentBytes: 1 << 20, new SnapperMetrics(), NullLogger.Instance))
        {
            for (var i = 0; i < 50; i++)
            {
                logger.Append(Logger.Encode([LogRecord.StateWritten(LoggedTxnKind.Batch, 1, Actor, i, [(byte)i])]));
            }

            await logger.AppendAsync(Logger.Encode([LogRecord.Committed(LoggedTxnKind.Batch, 1)]));

            // Read while the logger is still open: what the awaited append promised is on disk already.
            var records = LogSegmentReader.Read(Assert.Single(Logger.Segments(_folder)), isLastSegment: true).ToList();
            Assert.Equal(Enumerable.Range(0, 50).Select(i => (long)i), records.Take(50).Select(r => r.Seq));
            Assert.Equal(LogRecordType.Committed, records[50].Type);
        }
    }

    [Fact]
    public async Task A_torn_tail_in_the_last_segment_is_cut_and_the_rest_is_kept()
    {
        var segment = await WriteSegment(10);
        var whole = new FileInfo(segment).Length;
        using (var file = new FileStream(segment, FileMode.Open))
        {
            file.SetLength(whole - 3); // the last frame loses its end, as in a crash during the write
        }

        var records = LogSegmentReader.Read(segment, isLastSegment: true).ToList();

        Assert.Equal(19, records.Count);
        Assert.True(new FileInfo(segment).Length < whole - 3, "the torn frame was not cut off");
        Assert.Equal(19, LogSegmentReader.Read(segment, isLastSegment: true).Count());
    }

    [Fact]
    public async Task A_damaged_frame_inside_the_log_stops_recovery_with_the_file_and_offset()
    {
        var segment = await WriteSegment(10);
        var bytes = await File.ReadAllBytesAsync(segment);
        var second = SegmentHeader + LogFrame.SizeOf(LogRecord.StateWritten(LoggedTxnKind.Act, 0, Actor, 0, [0, 1, 2, 3]).Encode().Length);
        bytes[second + LogFrame.HeaderSize + 3] ^= 0xFF; // one flipped byte in the second record's payload
        await File.WriteAllBytesAsync(segment, bytes);

        var damage = Assert.Throws<LogCorruptedException>(() => LogSegmentReader.Read(segment, isLastSegment: true).ToList());

        Assert.Equal(segment, damage.Path);
        Assert.Equal(second, damage.Offset);
        Assert.Contains("checksum", damage.Message);
    }

    [Fact]
    public async Task The_same_damage_at_the_end_of_an_older_segment_is_not_mistaken_for_a_torn_tail()
    {
        var segment = await WriteSegment(10);
        using (var file = new FileStream(segment, FileMode.Open))
        {
            file.SetLength(file.Length - 3);
        }

        Assert.Throws<LogCorruptedException>(() => LogSegmentReader.Read(segment, isLastSegment: false).ToList());
    }

    /// <summary>
    /// Writes a first segment past half its size (so the spare is filled), then past its end (so the next segment is
    /// the spare, renamed), then <paramref name="tail"/> records into that preallocated segment.
    /// </summary>
    private async Task<string[]> WritePreallocatedSegment(int tail)
    {
        const int segmentBytes = 64 * 1024;
        byte[][] Kilobytes(int count, int first) => Logger.Encode([.. Enumerable.Range(first, count).Select(i =>
            LogRecord.StateWritten(LoggedTxnKind.Act, i, Actor, i, Enumerable.Repeat((byte)0xA5, 1024).ToArray()))]);

        await using (var logger = new Logger(_folder, 0, fsync: true, segmentBytes, new SnapperMetrics(), NullLogger.Instance))
        {
            await logger.AppendAsync(Kilobytes(34, 0));
            Assert.True(await Assert.IsType<Task<bool>>(logger.Spare), "the spare was not filled");
            await logger.AppendAsync(Kilobytes(34, 34));
            await logger.AppendAsync(Kilobytes(tail, 68));
        }

        var segments = Logger.Segments(_folder);
        Assert.Equal(2, segments.Length);
        Assert.Equal(segmentBytes, new FileInfo(segments[1]).Length);
        return segments;
    }

    [Fact]
    public async Task The_next_segment_is_preallocated_and_the_zeros_after_its_last_record_read_as_its_end()
    {
        var segments = await WritePreallocatedSegment(tail: 5);

        Assert.Equal(Enumerable.Range(0, 68).Select(i => (long)i), LogSegmentReader.Read(segments[0], isLastSegment: false).Select(r => r.Id));
        Assert.Equal(Enumerable.Range(68, 5).Select(i => (long)i), LogSegmentReader.Read(segments[1], isLastSegment: false).Select(r => r.Id));
        Assert.Equal(5, LogSegmentReader.Read(segments[1], isLastSegment: true).Count());
        Assert.Equal(64 * 1024, new FileInfo(segments[1]).Length); // nothing was cut
    }

    [Fact]
    public async Task A_torn_frame_before_the_zeros_of_a_preallocated_segment_is_cut()
    {
        var segments = await WritePreallocatedSegment(tail: 5);
        var bytes = await File.ReadAllBytesAsync(segments[1]);
        var frame = LogFrame.SizeOf(LogRecord.StateWritten(LoggedTxnKind.Act, 0, Actor, 0, new byte[1024]).Encode().Length);
        Array.Clear(bytes, SegmentHeader + 4 * frame + 100, frame - 100); // the fifth record lost its end in the crash
        await File.WriteAllBytesAsync(segments[1], bytes);

        Assert.Equal(Enumerable.Range(68, 4).Select(i => (long)i), LogSegmentReader.Read(segments[1], isLastSegment: true).Select(r => r.Id));
        Assert.Equal(SegmentHeader + 4 * frame, new FileInfo(segments[1]).Length);
    }

    [Fact]
    public async Task Damage_followed_by_records_in_a_preallocated_segment_is_not_mistaken_for_a_torn_tail()
    {
        var segments = await WritePreallocatedSegment(tail: 5);
        var bytes = await File.ReadAllBytesAsync(segments[1]);
        var frame = LogFrame.SizeOf(LogRecord.StateWritten(LoggedTxnKind.Act, 0, Actor, 0, new byte[1024]).Encode().Length);
        Array.Clear(bytes, SegmentHeader + frame, LogFrame.HeaderSize); // the second record's header reads as the end of the segment

        await File.WriteAllBytesAsync(segments[1], bytes);

        var damage = Assert.Throws<LogCorruptedException>(() => LogSegmentReader.Read(segments[1], isLastSegment: true).ToList());
        Assert.Equal(SegmentHeader + frame, damage.Offset);
    }
}
