using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using Snapper.Diagnostics;
using Snapper.Hosting;
using Snapper.Logging;
using Xunit;

namespace Snapper.Tests.Units;

/// <summary>
/// What the log remembers of ACT commits that participants have not all acknowledged: a first actor answers a late
/// Resolve from it after memory forgot, across checkpoints and restarts; an acknowledged commit is closed.
/// </summary>
public sealed class LogImageTests : IDisposable
{
    private static readonly GrainId A = GrainId.Create("account", "1");
    private readonly string _folder = Directory.CreateTempSubdirectory("snapper-open-commits-").FullName;

    public void Dispose() => Directory.Delete(_folder, recursive: true);

    private WriteAheadLog Open()
    {
        var options = new SnapperOptions { DataFolder = _folder, CheckpointInterval = TimeSpan.Zero };
        var log = new WriteAheadLog(Options.Create(options), new SnapperMetrics(), NullLogger<WriteAheadLog>.Instance);
        log.Open();
        return log;
    }

    [Fact]
    public async Task An_unacknowledged_commit_is_known_after_a_checkpoint_and_a_restart_and_an_acknowledged_one_is_not()
    {
        await using (var log = Open())
        {
            await log.AppendCommitAsync(10, awaitingAcks: true, [LogRecord.StateWritten(LoggedTxnKind.Act, 10, A, 1, [1]), LogRecord.CommittedAwaitingAcks(LoggedTxnKind.Act, 10)]);
            await log.AppendCommitAsync(11, awaitingAcks: true, [LogRecord.StateWritten(LoggedTxnKind.Act, 11, A, 2, [2]), LogRecord.CommittedAwaitingAcks(LoggedTxnKind.Act, 11)]);
            await log.AppendCommitAsync(12, awaitingAcks: false, [LogRecord.StateWritten(LoggedTxnKind.Act, 12, A, 3, [3]), LogRecord.Committed(LoggedTxnKind.Act, 12)]);
            Assert.True(log.IsUnacknowledgedCommit(10));
            Assert.False(log.IsUnacknowledgedCommit(12));

            await log.CheckpointAsync(); // 10 and 11 are open in the checkpoint
            log.Acknowledged(11);        // closed after the cut
            await log.WhenInOrderDurableAsync();
        }

        await using (var reopened = Open())
        {
            Assert.True(reopened.IsUnacknowledgedCommit(10));
            Assert.False(reopened.IsUnacknowledgedCommit(11));
            Assert.False(reopened.IsUnacknowledgedCommit(12));
            Assert.Equal(3, reopened.Recovered(A)!.StateSeq);
        }
    }
}
