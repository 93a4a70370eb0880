using Microsoft.Extensions.Logging;
using Snapper.Logging;

namespace Snapper.Pact;

/// <summary>
/// Batch commit (thesis §3.3.2.4): BatchComplete from each actor, commit records on the ordered logger, batches applied
/// in bid order, the bound on batch execution, and what happens when a commit record cannot be confirmed durable.
/// </summary>
internal sealed partial class PactService
{
    public void SubBatchCompleted(long bid, GrainId actor, Scheduling.CompletedVersion version)
    {
        if (Log.Enabled)
        {
            _ = LogThenCompleteAsync(bid, actor, version);
        }
        else
        {
            BatchComplete(bid, actor);
        }
    }

    /// <summary>
    /// BatchComplete from <paramref name="actor"/>, after its new state (if the sub-batch took a copy) is logged
    /// (thesis Fig. 3.7): queued ahead of the batch's commit record on the ordered logger, or, with several loggers,
    /// durable on the actor's own (<see cref="WriteAheadLog.StatesDurableBeforeVote"/>). If the write fails, the
    /// batch aborts: its vote cannot be trusted to survive a crash.
    /// </summary>
    private async Task LogThenCompleteAsync(long bid, GrainId actor, Scheduling.CompletedVersion version)
    {
        if (version.LogFailure is { } failure)
        {
            // The state could not be put in log form (taken when the sub-batch completed).
            AbortUnlogged(failure);
            return;
        }

        try
        {
            if (version.State is { } state)
            {
                var name = version.Actor ?? actor.ToString();
                // A global part's states are logged under its gbid: the master decides it, and this worker's recovery asks
                // the master about a gbid it finds undecided.
                var gbid = GbidOf(bid);
                if (gbid >= 0)
                {
                    await Log.AppendInOrderAsync(LogRecord.StateWritten(LoggedTxnKind.GlobalBatch, gbid, name, version.Seq, state)).WaitAsync(_logWriteTimeout);
                }
                else if (Log.StatesDurableBeforeVote)
                {
                    await Log.AppendStateAsync(actor, LogRecord.StateWritten(LoggedTxnKind.Batch, bid, name, version.Seq, state)).WaitAsync(_logWriteTimeout);
                }
                else
                {
                    // Queued ahead of the batch's commit record on the same ordered logger: that record's fsync covers it.
                    Log.QueueStateInOrder(LoggedTxnKind.Batch, bid, name, version.Seq, state);
                }
            }
        }
        catch (Exception exception)
        {
            AbortUnlogged(exception);
            return;
        }

        BatchComplete(bid, actor);

        void AbortUnlogged(Exception exception) => Abort(new PactTicket(bid, bid), new TransactionAbortedException(bid, AbortReason.PrepareFailed,
            $"actor {actor} could not log its state for batch {bid}: {exception.Message}"));
    }

    /// <summary>BatchComplete: <paramref name="actor"/> finished its sub-batch of <paramref name="bid"/>.</summary>
    public void BatchComplete(long bid, GrainId actor)
    {
        if (!_executing.TryGetValue(bid, out var batch) || batch.Complete() > 0)
        {
            return; // aborted meanwhile, or others still to come
        }

        _executing.TryRemove(bid, out _);
        _metrics.BatchExecuted(batch.EmittedAt);
        lock (_gate)
        {
            if (_uncommitted.ContainsKey(bid))
            {
                CommitInOrder();
            }
        }
    }

    /// <summary>
    /// Aborts the oldest batch, and so every later one, if it has been running longer than ExecutionTimeout. A batch
    /// whose commit record is being written is bounded by LogWriteTimeout instead (<see cref="LogThenCommitAsync"/>).
    /// </summary>
    private void AbortOverdue()
    {
        WithdrawStaleSubmissions();
        AskAboutSilentVotes();
        PactBatch? overdue;
        lock (_gate)
        {
            overdue = _uncommitted.Values.FirstOrDefault(b => !b.Committing && !b.Voted);
        }

        // A batch that completed waits only for earlier ones, which are committing (bounded by LogWriteTimeout) or voted
        // global parts (bounded by the master, and by this worker asking it after ExecutionTimeout): it gets twice the
        // bound, so that the question about the part ahead of it is answered first; a batch still running gets the bound.
        var bound = overdue is { Pending: 0 } ? 2 * _executionTimeout : _executionTimeout;
        if (overdue is not null && !overdue.Committing && System.Diagnostics.Stopwatch.GetElapsedTime(overdue.EmittedAt) > bound)
        {
            _logger.LogWarning("PACT batch {Bid} did not commit within {Timeout}; aborting it and every later batch", overdue.Bid, bound);
            Abort(new PactTicket(overdue.Bid, overdue.Bid), new TransactionAbortedException(overdue.Bid, AbortReason.ExecutionTimeout,
                $"its batch {overdue.Bid} did not commit within {bound}."));
        }
    }

    /// <summary>
    /// Commits, in bid order, every batch at the head that all participants reported complete. With a log, each
    /// such batch's BatchCommit record is appended as soon as the batch is ready, without waiting for the records
    /// appended before it (they all go to one logger, which keeps them in order, see
    /// <see cref="WriteAheadLog.AppendInOrderAsync"/>); a batch is applied (actors install its versions, its
    /// clients hear) once its record is durable and every earlier batch has been applied.
    /// </summary>
    private void CommitInOrder()
    {
        if (!Log.Enabled)
        {
            ApplyCommits();
            VoteReadyGlobalParts();
            return;
        }

        if (_commitStopped)
        {
            return;
        }

        List<PactBatch>? ready = null;
        while (_notCommitting.TryPeek(out var batch) && batch.ReadyToCommit)
        {
            _notCommitting.Dequeue();
            batch.Committing = true;
            (ready ??= []).Add(batch);
        }

        if (ready is not null)
        {
            // The records are queued when this returns (refused at once if the log failed earlier: then Committing is
            // false again and the batches aborted).
            _ = LogThenCommitAsync(ready);
            foreach (var batch in ready)
            {
                if (batch.Committing)
                {
                    batch.CommitQueued();
                }
            }
        }

        VoteReadyGlobalParts();
    }

    /// <summary>The gbid of <paramref name="bid"/> if it is a global part (its states must be durable before this worker votes), else -1.</summary>
    private long GbidOf(long bid) => _executing.TryGetValue(bid, out var batch) ? batch.Gbid : -1;

    /// <summary>A batch's commit record here: under its gbid for a global part (what recovery matches its states against).</summary>
    private static LogRecord CommitRecordOf(PactBatch batch) =>
        batch.IsGlobal ? LogRecord.Committed(LoggedTxnKind.GlobalBatch, batch.Gbid) : LogRecord.Committed(LoggedTxnKind.Batch, batch.Bid);

    private async Task LogThenCommitAsync(List<PactBatch> batches)
    {
        Exception? failure = null;
        try
        {
            // Resumes on the logger's thread as soon as the records are durable (not on the grain whose completion started
            // this): applying a commit is short, takes locks only, and never waits for the log.
            await Log.AppendCommitsInOrderAsync([.. batches.Select(CommitRecordOf)]).WaitAsync(_logWriteTimeout).ConfigureAwait(false);
        }
        catch (LogWriteRefusedException refused)
        {
            // Refused before anything was written: these batches certainly did not commit.
            lock (_gate)
            {
                _logger.LogCritical(refused, "BatchCommit records for batches {First}..{Last} were refused by the log; PACT commits are stopped", batches[0].Bid, batches[^1].Bid);
                _commitStopped = true;
                foreach (var batch in batches)
                {
                    batch.Committing = false;
                }

                var reason = new TransactionAbortedException(batches[0].Bid, AbortReason.LogWriteFailed, $"the write-ahead log refused its commit record: {refused.Message}");
                AbortUncommittedLocked(new PactTicket(batches[0].Bid, batches[0].Bid), reason);
            }

            return;
        }
        catch (Exception exception)
        {
            failure = exception;
        }

        lock (_gate)
        {
            if (failure is not null)
            {
                // Unknown whether the records reached the disk: recovery will decide. The clients of these batches hear
                // "in doubt", never "aborted" or "committed"; commits stop (the log refuses later writes after a failed
                // one anyway), and every batch not yet committing aborts, so nobody waits for a commit that cannot come.
                _logger.LogCritical(failure, "BatchCommit records for batches {First}..{Last} were not confirmed durable; their outcome is in doubt and PACT commits are stopped", batches[0].Bid, batches[^1].Bid);
                _commitStopped = true;
                _inDoubtFrom = Math.Min(_inDoubtFrom, batches[0].Bid);
                ReportInDoubt(batches, failure);

                // Batches not yet committing abort; later groups still committing are left to their own continuation
                // (their records are queued after these, so they end in doubt too).
                if (_uncommitted.Values.Any(b => !b.Committing))
                {
                    AbortUncommittedLocked(new PactTicket(batches[0].Bid, batches[0].Bid),
                        new TransactionAbortedException(batches[0].Bid, AbortReason.LogWriteFailed, "PACT commits stopped after a failed log write."));
                }

                AdvanceResolvedBid();
                return;
            }

            if (_commitStopped && batches[0].Bid > _inDoubtFrom)
            {
                // Durable after an earlier group was reported in doubt (a stalled write that finished late): the disk
                // may well hold both, but this silo dropped the earlier one's versions, so it cannot apply these.
                ReportInDoubt(batches, new TimeoutException("an earlier commit record was not confirmed durable in time"));
                return;
            }

            foreach (var batch in batches)
            {
                batch.CommitLogged = true;
            }

            ApplyCommits();
        }
    }

    /// <summary>
    /// Resolves batches whose commit record may or may not be on disk: their clients hear "in doubt", and their versions
    /// leave this silo's memory (recovery, not this silo, decides what they become). Under <see cref="_gate"/>.
    /// </summary>
    private void ReportInDoubt(List<PactBatch> batches, Exception failure)
    {
        foreach (var batch in batches)
        {
            if (_uncommitted.Remove(batch.Bid))
            {
                _executing.TryRemove(batch.Bid, out _);
                ForgetDooms(batch);
                batch.Resolve(new TransactionInDoubtException(batch.Bid,
                    $"the commit record of its batch {batch.Bid} was not confirmed durable: {failure.Message}"));
            }
        }

        var reason = new TransactionAbortedException(batches[0].Bid, AbortReason.LogWriteFailed, "PACT commits stopped after a failed log write.");
        foreach (var actor in batches.SelectMany(b => b.Participants).Distinct())
        {
            ScheduleOf(actor).AbortAfter(batches[0].Bid - 1, (_, tid) => new TransactionAbortedException(tid, reason.Reason, reason.Message));
        }
    }

    /// <summary>Applies the batches at the head that may commit: all complete and, with a log, their records durable.</summary>
    private void ApplyCommits()
    {
        while (_uncommitted.Count > 0)
        {
            var bid = _uncommitted.GetKeyAtIndex(0);
            var batch = _uncommitted.GetValueAtIndex(0);
            if (!batch.ReadyToCommit || (Log.Enabled && !batch.CommitLogged))
            {
                return;
            }

            _uncommitted.Remove(bid);
            _lastCommittedBid = bid;
            AdvanceResolvedBid();
            for (var i = 0; i < batch.Participants.Length; i++)
            {
                (batch.Schedules?[i] ?? ScheduleOf(batch.Participants[i])).Commit(bid);
            }

            ForgetDooms(batch);
            batch.Resolve(null);
            _metrics.BatchCommitted(System.Diagnostics.Stopwatch.GetElapsedTime(batch.EmittedAt));
        }
    }
}
