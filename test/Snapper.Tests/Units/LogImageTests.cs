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

    [Fact]
    public async Task Parts_decided_on_another_silo_stay_in_doubt_through_checkpoints_and_restarts_until_an_answer_is_logged()
    {
        var b = GrainId.Create("account", "2");
        var c = GrainId.Create("account", "3");
        await using (var log = Open())
        {
            // A remote ACT participant's state (first actor A elsewhere), a global part under its gbid, and a global part
            // below a later committed one (decided, hence dropped: gbids commit in order on a worker).
            await log.AppendInOrderAsync(LogRecord.RemoteActStateWritten(5, b, 1, [5], A));
            await log.AppendInOrderAsync(LogRecord.StateWritten(LoggedTxnKind.GlobalBatch, 700, c, 1, [7]));
            await log.AppendInOrderAsync(LogRecord.StateWritten(LoggedTxnKind.GlobalBatch, 800, c, 2, [8]), LogRecord.Committed(LoggedTxnKind.GlobalBatch, 800));
            await log.AppendInOrderAsync(LogRecord.StateWritten(LoggedTxnKind.GlobalBatch, 900, A, 1, [9]));
        }

        await using (var reopened = Open())
        {
            Assert.Equal(2, reopened.LastRecovery!.InDoubt);
            Assert.True(reopened.IsInDoubt(b));
            Assert.True(reopened.IsInDoubt(A));
            Assert.False(reopened.IsInDoubt(c));
            Assert.Equal(2, reopened.Recovered(c)!.StateSeq);
            Assert.Equal(LoggedTxnKind.RemoteAct, reopened.InDoubt.Single(r => r.Actor == b.ToString()).Kind);
            Assert.Equal(A.ToString(), reopened.InDoubt.Single(r => r.Actor == b.ToString()).Decider);

            await reopened.CheckpointAsync();
            var settled = reopened.WhenSettledAsync(b);
            Assert.False(settled.IsCompleted);
            await reopened.ResolveInDoubtAsync(LoggedTxnKind.RemoteAct, 5, committed: true);
            await settled;
            Assert.Equal([5], reopened.Recovered(b)!.State);
        }

        await using (var again = Open())
        {
            Assert.Equal(1, again.LastRecovery!.InDoubt); // gbid 900 is still unanswered, after a checkpoint and a restart
            Assert.Equal([5], again.Recovered(b)!.State);
            await again.ResolveInDoubtAsync(LoggedTxnKind.GlobalBatch, 900, committed: false);
            Assert.False(again.IsInDoubt(A));
        }

        await using (var last = Open())
        {
            Assert.Equal(0, last.LastRecovery!.InDoubt);
            Assert.Null(last.Recovered(A)!.State);
        }
    }
}
