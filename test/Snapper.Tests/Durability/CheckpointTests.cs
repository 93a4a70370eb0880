using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using Snapper.Diagnostics;
using Snapper.Hosting;
using Snapper.Logging;
using Xunit;

namespace Snapper.Tests.Durability;

/// <summary>
/// Checkpoints of the write-ahead log on their own: what a checkpoint keeps and deletes, recovery from a checkpoint
/// plus the log after it, decisions that arrive after the cut, and damage or leftovers of a crash mid-checkpoint.
/// </summary>
public sealed class CheckpointTests : IDisposable
{
    private static readonly GrainId A = GrainId.Create("account", "1");
    private static readonly GrainId B = GrainId.Create("account", "2");
    private readonly string _folder = Directory.CreateTempSubdirectory("snapper-checkpoint-").FullName;

    public void Dispose() => Directory.Delete(_folder, recursive: true);

    private WriteAheadLog Open()
    {
        var options = new SnapperOptions { DataFolder = _folder, Loggers = 2, CheckpointInterval = TimeSpan.Zero };
        var log = new WriteAheadLog(Options.Create(options), new SnapperMetrics(), NullLogger<WriteAheadLog>.Instance);
        log.Open();
        return log;
    }

    private static LogRecord State(LoggedTxnKind kind, long id, GrainId actor, long seq, byte value) => LogRecord.StateWritten(kind, id, actor, seq, [value]);

    private string[] Segments() => [.. Directory.GetFiles(_folder, "*.wal", SearchOption.AllDirectories).Order()];

    /// <summary>
    /// Before the checkpoint: A commits ACT 10 (state 1); batch 20 on B is complete but undecided; ACT 11 on A is
    /// prepared but never decided (it is aborted).
    /// </summary>
    private static async Task WriteHistoryBeforeCheckpointAsync(WriteAheadLog log)
    {
        await log.AppendAsync(A, State(LoggedTxnKind.Act, 10, A, 1, 1));
        await log.AppendInOrderAsync(LogRecord.Committed(LoggedTxnKind.Act, 10));
        await log.AppendAsync(B, State(LoggedTxnKind.Batch, 20, B, 1, 2));
        await log.AppendAsync(A, State(LoggedTxnKind.Act, 11, A, 2, 3));
    }

    [Fact]
    public async Task A_checkpoint_replaces_the_segments_below_its_cut_and_keeps_undecided_records_for_a_later_decision()
    {
        await using (var log = Open())
        {
            await WriteHistoryBeforeCheckpointAsync(log);
            var written = Segments().Where(f => new FileInfo(f).Length > 0).ToArray();

            var report = await log.CheckpointAsync();

            Assert.Equal(0, report.Number);
            Assert.Equal(2, report.Undecided);
            Assert.All(written, f => Assert.False(File.Exists(f), $"{f} is covered by the checkpoint but was not deleted"));

            // The batch's decision comes after the cut.
            await log.AppendInOrderAsync(LogRecord.Committed(LoggedTxnKind.Batch, 20));
        }

        await using var recovered = Open();

        Assert.Equal(0, recovered.LastRecovery!.Checkpoint);
        Assert.Equal(new byte[] { 1 }, recovered.Recovered(A)!.State);
        Assert.Equal(2, recovered.Recovered(A)!.MaxSeq); // the aborted ACT's seq is never reused
        Assert.Equal(new byte[] { 2 }, recovered.Recovered(B)!.State);
        Assert.Equal(20, recovered.MaxId);
    }

    [Fact]
    public async Task Records_recovery_presumed_aborted_are_dropped_by_the_next_checkpoint()
    {
        await using (var log = Open())
        {
            await WriteHistoryBeforeCheckpointAsync(log);
        }

        await using var recovered = Open();
        Assert.Null(recovered.Recovered(B)!.State);
        Assert.Equal(2, recovered.LastRecovery!.Dropped);

        var report = await recovered.CheckpointAsync();

        Assert.Equal(0, report.Undecided);
    }

    [Fact]
    public async Task Leftovers_of_a_crash_during_a_checkpoint_are_ignored_and_removed()
    {
        var aside = Directory.CreateTempSubdirectory("snapper-aside-").FullName;
        try
        {
            string[] covered;
            await using (var log = Open())
            {
                await WriteHistoryBeforeCheckpointAsync(log);
                covered = Segments().Where(f => new FileInfo(f).Length > 0).ToArray();
                foreach (var file in covered)
                {
                    File.Copy(file, Path.Combine(aside, Path.GetFileName(Path.GetDirectoryName(file)!) + "_" + Path.GetFileName(file)));
                }

                await log.CheckpointAsync();

                // As if the silo died after renaming the checkpoint but before deleting what it covers, and while
                // writing the next checkpoint.
                foreach (var file in covered)
                {
                    File.Copy(Path.Combine(aside, Path.GetFileName(Path.GetDirectoryName(file)!) + "_" + Path.GetFileName(file)), file);
                }

                await File.WriteAllTextAsync(Path.Combine(_folder, "checkpoint-000000000001.ckpt.tmp"), "half a checkpoint");
            }

            await using var recovered = Open();

            Assert.Equal(0, recovered.LastRecovery!.Checkpoint);
            Assert.All(covered, f => Assert.False(File.Exists(f), $"{f} is covered by the checkpoint but was not removed"));
            Assert.Equal(new byte[] { 1 }, recovered.Recovered(A)!.State);
            Assert.Empty(Directory.GetFiles(_folder, "*.tmp"));
            Assert.All(Segments(), f => Assert.Empty(LogSegmentReader.Read(f, isLastSegment: true)));
        }
        finally
        {
            Directory.Delete(aside, recursive: true);
        }
    }

    [Fact]
    public async Task A_damaged_checkpoint_stops_recovery_with_the_file_and_offset()
    {
        await using (var log = Open())
        {
            await WriteHistoryBeforeCheckpointAsync(log);
            await log.CheckpointAsync();
        }

        var checkpoint = Assert.Single(Directory.GetFiles(_folder, "checkpoint-*.ckpt"));
        var bytes = await File.ReadAllBytesAsync(checkpoint);
        bytes[^3] ^= 0xFF; // inside the end marker
        await File.WriteAllBytesAsync(checkpoint, bytes);

        var damage = Assert.Throws<LogCorruptedException>(() => Open());

        Assert.Equal(checkpoint, damage.Path);
        Assert.True(damage.Offset > 0 && damage.Offset < bytes.Length);
        Assert.Contains("checksum", damage.Message);
    }
}
