using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using Snapper.Diagnostics;
using Snapper.Hosting;
using Snapper.Logging;
using Xunit;

namespace Snapper.Tests.Units;

/// <summary>
/// Incremental logging (thesis §5.3.3.2) in the log itself: key-value change records fold onto an actor's image in seq
/// order, through checkpoints, restarts and answers for parts in doubt, and segments say which format they are.
/// </summary>
public sealed class IncrementalLogTests : IDisposable
{
    private static readonly GrainId A = GrainId.Create("shelf", "1");
    private readonly string _folder = Directory.CreateTempSubdirectory("snapper-incremental-").FullName;

    public void Dispose() => Directory.Delete(_folder, recursive: true);

    private WriteAheadLog Open(int loggers = 1)
    {
        var options = new SnapperOptions { DataFolder = _folder, CheckpointInterval = TimeSpan.Zero, Loggers = loggers };
        var log = new WriteAheadLog(Options.Create(options), new SnapperMetrics(), NullLogger<WriteAheadLog>.Instance);
        log.Open();
        return log;
    }

    private static byte[] Key(string key) => System.Text.Encoding.UTF8.GetBytes(key);

    /// <summary>A change record's payload: keys set to values, null values deleted.</summary>
    private static LoggedState Changes(params (string Key, string? Value)[] entries) => new(
        KeyedEntries.Encode(whole: false, [.. entries.Select(e => new KeyedEntry(0, Key(e.Key), e.Value is null ? null : Key(e.Value)))]), Incremental: true);

    /// <summary>A change record ordered per key (an ACT that held only its keys of a key-level actor).</summary>
    private static LoggedState KeyOrdered(params (string Key, string? Value)[] entries) => new(
        KeyedEntries.Encode(whole: false, [.. entries.Select(e => new KeyedEntry(0, Key(e.Key), e.Value is null ? null : Key(e.Value)))], keyOrdered: true), Incremental: true);

    private static LoggedState Whole(params (string Key, string Value)[] entries) => new(
        KeyedEntries.Encode(whole: true, [.. entries.Select(e => new KeyedEntry(0, Key(e.Key), Key(e.Value)))]), Incremental: true);

    /// <summary>The keys and values of a recovered key-value image.</summary>
    private static Dictionary<string, string> Image(RecoveredActor? actor)
    {
        Assert.NotNull(actor);
        Assert.True(actor.Incremental);
        var (whole, entries) = KeyedEntries.Decode(actor.State);
        Assert.True(whole);
        return entries.ToDictionary(e => System.Text.Encoding.UTF8.GetString(e.Key), e => System.Text.Encoding.UTF8.GetString(e.Value!));
    }

    private static LogRecord Changed(long id, long seq, LoggedState state) => LogRecord.StateWritten(LoggedTxnKind.Act, id, A, seq, state);

    [Fact]
    public void Changes_apply_in_seq_order_whatever_order_they_are_read_in_and_a_whole_state_replaces_what_was_before()
    {
        var changes = new[]
        {
            Changed(3, 3, Changes(("x", null), ("z", "3"))),
            Changed(1, 1, Changes(("x", "1"), ("y", "1"))),
            Changed(2, 2, Changes(("x", "2"))),
        };

        var actor = RecoveredActor.None.Advance(changes);

        Assert.Equal(new Dictionary<string, string> { ["y"] = "1", ["z"] = "3" }, Image(actor));
        Assert.Equal(3, actor.StateSeq);
        Assert.Equal(new Dictionary<string, string> { ["w"] = "4" }, Image(actor.Advance([Changed(5, 5, Changes(("w", "4"))), Changed(4, 4, Whole())])));
        Assert.Same(actor, actor.Advance([Changed(2, 2, Changes(("x", "stale")))]));
    }

    [Fact]
    public void Changes_after_an_opaque_state_of_the_same_actor_stop_recovery_with_a_clear_error()
    {
        var opaque = RecoveredActor.None.Advance([LogRecord.StateWritten(LoggedTxnKind.Act, 1, A, 1, [1, 2, 3])]);

        var error = Assert.Throws<SnapperException>(() => opaque.Advance([Changed(2, 2, Changes(("x", "1")))]));

        Assert.Contains("opaque state", error.Message);
    }

    [Fact]
    public async Task Committed_changes_on_two_loggers_fold_through_a_checkpoint_and_a_restart_and_uncommitted_ones_do_not()
    {
        await using (var log = Open(loggers: 2))
        {
            await log.AppendAsync(A, Changed(1, 1, Changes(("a", "1"), ("b", "1"))));
            await log.AppendInOrderAsync(LogRecord.Committed(LoggedTxnKind.Act, 1));
            await log.CheckpointAsync();

            // Seq 3 on the actor's own logger, seq 2 on the ordered one: read in either order, applied 2 then 3.
            await log.AppendAsync(A, Changed(3, 3, Changes(("a", null), ("c", "3"))));
            await log.AppendInOrderAsync(Changed(2, 2, Changes(("a", "2"), ("b", "2"))), LogRecord.Committed(LoggedTxnKind.Act, 2));
            await log.AppendInOrderAsync(LogRecord.Committed(LoggedTxnKind.Act, 3));
            await log.AppendInOrderAsync(Changed(4, 4, Changes(("b", "never"))));
        }

        await using (var reopened = Open(loggers: 2))
        {
            Assert.Equal(new Dictionary<string, string> { ["b"] = "2", ["c"] = "3" }, Image(reopened.Recovered(A)));
            Assert.Equal(4, reopened.Recovered(A)!.MaxSeq);
            await reopened.CheckpointAsync();
        }

        await using (var again = Open(loggers: 2))
        {
            Assert.Equal(new Dictionary<string, string> { ["b"] = "2", ["c"] = "3" }, Image(again.Recovered(A)));
            Assert.Equal(0, again.LastRecovery!.Records);
        }
    }

    [Fact]
    public async Task A_change_ordered_per_key_that_commits_after_a_checkpoint_took_a_larger_seq_still_applies()
    {
        await using (var log = Open())
        {
            // ACT 5 (key a) took seq 5 at prepare; ACT 6 (key b) took seq 6 and committed first; a checkpoint folded it.
            await log.AppendInOrderAsync(Changed(6, 6, KeyOrdered(("b", "6"))), LogRecord.Committed(LoggedTxnKind.Act, 6));
            await log.CheckpointAsync();
            await log.AppendInOrderAsync(Changed(5, 5, KeyOrdered(("a", "5"))), LogRecord.Committed(LoggedTxnKind.Act, 5));

            // The same late record without the flag is taken for a version a larger seq superseded.
            await log.AppendInOrderAsync(Changed(4, 4, Changes(("c", "stale"))), LogRecord.Committed(LoggedTxnKind.Act, 4));
        }

        await using (var reopened = Open())
        {
            Assert.Equal(new Dictionary<string, string> { ["a"] = "5", ["b"] = "6" }, Image(reopened.Recovered(A)));
            Assert.Equal(6, reopened.Recovered(A)!.StateSeq);
        }

        var image = RecoveredActor.None.Advance([Changed(6, 6, KeyOrdered(("b", "6")))]);
        Assert.Equal(new Dictionary<string, string> { ["a"] = "5", ["b"] = "6" }, Image(image.Advance([Changed(5, 5, KeyOrdered(("a", "5")))])));
        Assert.Same(image, image.Advance([Changed(5, 5, Changes(("a", "5")))]));
    }

    [Fact]
    public async Task Answers_for_changes_in_doubt_apply_them_in_seq_order_whatever_order_they_come_in()
    {
        await using (var log = Open())
        {
            await log.AppendInOrderAsync(Changed(1, 1, Changes(("a", "1"))), LogRecord.Committed(LoggedTxnKind.Act, 1));
            await log.AppendInOrderAsync(LogRecord.StateWritten(LoggedTxnKind.GlobalBatch, 700, A, 2, Changes(("a", "7"), ("b", "7"))));
            await log.AppendInOrderAsync(LogRecord.StateWritten(LoggedTxnKind.GlobalBatch, 800, A, 3, Changes(("a", "8"))));
        }

        await using (var reopened = Open())
        {
            Assert.True(reopened.IsInDoubt(A));
            await reopened.ResolveInDoubtAsync(LoggedTxnKind.GlobalBatch, 800, committed: true);
            Assert.True(reopened.IsInDoubt(A)); // 800's changes wait for 700's answer
            Assert.Equal(new Dictionary<string, string> { ["a"] = "1" }, Image(reopened.Recovered(A)));

            await reopened.ResolveInDoubtAsync(LoggedTxnKind.GlobalBatch, 700, committed: true);
            Assert.False(reopened.IsInDoubt(A));
            Assert.Equal(new Dictionary<string, string> { ["a"] = "8", ["b"] = "7" }, Image(reopened.Recovered(A)));
        }

        await using (var again = Open())
        {
            Assert.Equal(new Dictionary<string, string> { ["a"] = "8", ["b"] = "7" }, Image(again.Recovered(A)));
        }
    }

    [Fact]
    public async Task A_segment_of_a_newer_format_is_refused_saying_so_and_one_written_before_formats_is_still_read()
    {
        var folder = Path.Combine(_folder, "logger-0");
        Directory.CreateDirectory(folder);
        var newer = Path.Combine(folder, "000000000000.wal");
        using (var file = File.Create(newer))
        {
            var header = LogSegmentFormat.Header();
            header[^4] = 99;
            LogFrame.Write(file, header);
        }

        var refused = Assert.Throws<LogCorruptedException>(() => LogSegmentReader.Read(newer, isLastSegment: true).ToList());
        Assert.Contains("format 99", refused.Message);

        // Format 1: records from the first byte; a change record is not one of its types.
        var older = Path.Combine(folder, "000000000001.wal");
        using (var file = File.Create(older))
        {
            LogFrame.Write(file, LogRecord.StateWritten(LoggedTxnKind.Act, 1, A, 1, [1]).Encode());
            LogFrame.Write(file, LogRecord.Committed(LoggedTxnKind.Act, 1).Encode());
        }

        Assert.Equal([LogRecordType.StateWritten, LogRecordType.Committed], LogSegmentReader.Read(older, isLastSegment: false).Select(r => r.Type));
        using (var file = new FileStream(older, FileMode.Append))
        {
            LogFrame.Write(file, Changed(2, 2, Changes(("x", "1"))).Encode());
            LogFrame.Write(file, LogRecord.Committed(LoggedTxnKind.Act, 2).Encode());
        }

        Assert.Contains("format 1", Assert.Throws<LogCorruptedException>(() => LogSegmentReader.Read(older, isLastSegment: false).ToList()).Message);
    }
}
