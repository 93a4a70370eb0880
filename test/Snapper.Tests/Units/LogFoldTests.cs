using Snapper.Logging;
using Xunit;

namespace Snapper.Tests.Units;

/// <summary>
/// The fold a checkpoint and recovery make of a stretch of log, which copies only the state it keeps per actor: the
/// newest committed state wins whatever logger it sits on and in whatever order the segments are read, every record
/// counts in its actor's largest seq, undecided records stay with their bytes, aborted ones go.
/// </summary>
public sealed class LogFoldTests : IDisposable
{
    private static readonly GrainId A = GrainId.Create("account", "1");
    private static readonly GrainId B = GrainId.Create("account", "2");
    private readonly string _folder = Directory.CreateTempSubdirectory("snapper-fold-").FullName;

    public void Dispose() => Directory.Delete(_folder, recursive: true);

    [Fact]
    public void The_newest_committed_state_of_each_actor_wins_across_loggers_and_the_rest_is_read_without_its_bytes()
    {
        // Logger 0 holds A's versions 1-3 and 6 (aborted) and B's 1; logger 1 holds A's 4 and 7 (undecided) and B's 2.
        var first = Segment("logger-0",
            State(1, A, 1), Commit(1),
            State(2, A, 2), Commit(2),
            State(3, A, 3), Commit(3),
            State(6, A, 6), LogRecord.Aborted(LoggedTxnKind.Batch, 6),
            State(10, B, 1), Commit(10));
        var second = Segment("logger-1",
            State(4, A, 4), Commit(4),
            State(7, A, 7),
            State(11, B, 2), Commit(11));

        foreach (var order in new[] { new[] { first, second }, new[] { second, first } })
        {
            var image = LogImage.Empty.Fold(order.Select(f => (f, false)).ToList(), abortedUpTo: -1, out var statistics);

            Assert.Equal([4], image.Actors[A.ToString()].State!);
            Assert.Equal(4, image.Actors[A.ToString()].StateSeq);
            Assert.Equal(7, image.Actors[A.ToString()].MaxSeq);
            Assert.Equal([2], image.Actors[B.ToString()].State!);
            var undecided = Assert.Single(image.Undecided);
            Assert.Equal(7, undecided.Seq);
            Assert.Equal([7], undecided.State!);
            Assert.Equal(6, statistics.CommittedBatches);
        }

        // Folded again onto that image, a later stretch replaces A's state only with a newer committed one.
        var image1 = LogImage.Empty.Fold([(first, false), (second, false)], -1, out _);
        var later = Segment("logger-0", State(7, A, 7), Commit(7), State(12, A, 5), Commit(12));
        var image2 = image1.Fold([(later, false)], -1, out _);
        Assert.Equal([7], image2.Actors[A.ToString()].State!);
        Assert.Equal(7, image2.Actors[A.ToString()].StateSeq);
        Assert.Empty(image2.Undecided);
    }

    private string Segment(string logger, params LogRecord[] records)
    {
        var folder = Path.Combine(_folder, logger);
        Directory.CreateDirectory(folder);
        var path = Path.Combine(folder, $"{Directory.GetFiles(folder).Length:D12}.wal");
        using var file = File.Create(path);
        LogFrame.Write(file, LogSegmentFormat.Header());
        foreach (var record in records)
        {
            LogFrame.Write(file, record.Encode());
        }

        return path;
    }

    private static LogRecord State(long bid, GrainId actor, long seq) => LogRecord.StateWritten(LoggedTxnKind.Batch, bid, actor, seq, [(byte)seq]);

    private static LogRecord Commit(long bid) => LogRecord.Committed(LoggedTxnKind.Batch, bid);
}
