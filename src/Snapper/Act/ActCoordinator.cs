using Microsoft.Extensions.Logging;
using Snapper.Actors;
using Snapper.Hybrid;

namespace Snapper.Act;

/// <summary>
/// The first actor's side of an ACT (thesis §3.3.3.3): two-phase commit with presumed abort, the hybrid check between
/// the votes and the decision (§3.3.4.3-4), the commit record, and abort fan-out.
/// </summary>
/// <remarks>
/// Invariants:
/// <list type="bullet">
/// <item>The first actor knows every participant before it starts 2PC: each call returns the participants it touched,
/// and a method may not return while a call it started is still running.</item>
/// <item>From the decision on, the outcome is remembered (in memory, and with a log in the commit record) before any
/// commit message is sent, so a participant asking <c>Resolve</c> hears it.</item>
/// <item>A client hears "committed" only once the commit record is durable, "aborted" only when nothing of the
/// transaction can be committed, and "in doubt" when the decision was taken but its record may or may not be on disk.</item>
/// </list>
/// Runs only in turns of the activation that owns the core (see <see cref="ActorCore{TState}"/>).
/// </remarks>
internal sealed class ActCoordinator<TState>(ActorCore<TState> core) where TState : class
{
    private SnapperRuntime Runtime => core.Runtime;

    private ActParticipant<TState> Self => core.Participant;

    /// <summary>Commits the transaction. Returns null when committed, else why not (an abort, or in doubt).</summary>
    /// <remarks>
    /// Runs once per ACT, so it is written with arrays and loops rather than queries: one request object per phase,
    /// shared by every participant (<see cref="ActPhaseRequest"/>), and no iterator or closure per participant.
    /// </remarks>
    public async Task<SnapperException?> CommitAsync(ActorTransaction<TState> txn)
    {
        var participants = OtherParticipants(txn);
        txn.Phase = ActorTxnPhase.Preparing;
        var votes = Array.Empty<PrepareResult>();
        if (participants.Length > 0)
        {
            try
            {
                Runtime.Metrics.PreparesSent(participants.Length);
                var prepare = new ActPhaseRequest(Runtime.CallKeys.Own, txn.Tid, txn.MaxBefore, txn.ReadUncommitted);
                var prepared = new Task<PrepareResult>[participants.Length];
                for (var i = 0; i < participants.Length; i++)
                {
                    prepared[i] = Runtime.SendPrepare(participants[i], prepare);
                }

                votes = await Task.WhenAll(prepared).WaitAsync(Runtime.Options.PrepareTimeout);
            }
            catch (Exception exception)
            {
                return new TransactionAbortedException(txn.Tid, AbortReason.PrepareFailed, $"prepare did not complete: {exception.Message}", exception);
            }

            var refused = Array.FindIndex(votes, v => v.Vote == PrepareVote.No);
            if (refused >= 0)
            {
                return txn.Doomed ?? Refused(txn.Tid, participants[refused], votes[refused]);
            }
        }

        core.ActTrace?.Invoke(core.Self, txn.Tid, $"votes: {string.Join(", ", participants.Select((p, i) => $"{p} {votes[i].Vote}"))}");
        if (await CheckHybridAsync(txn, votes) is { } unsafeToCommit)
        {
            return unsafeToCommit;
        }

        if (txn.Doomed is { } doomed)
        {
            // A participant asked for the decision meanwhile and was told "aborted".
            return doomed;
        }

        // The decision is taken here. With a log, one append on the ordered logger carries every writer's new state
        // and the commit record; the transaction is then installed and its locks released at once, before the append
        // is durable (early lock release), and only its client waits for the disk. This is safe because whatever
        // reads the released state can only commit through a record appended later to the same ordered logger
        // (WriteAheadLog.AppendInOrderAsync), which a crash cannot keep while losing this one.
        var (writers, writersOnOtherSilos) = CountWriters(votes);
        core.ActTrace?.Invoke(core.Self, txn.Tid, $"decides commit: {writers} writer(s) besides itself");
        Task? durable = null;
        if (Runtime.Log.Enabled && (txn.Wrote || writers > 0))
        {
            try
            {
                durable = txn.CommitLogging = LogCommit(txn, participants, votes, awaitingAcks: writers > 0);
            }
            catch (Exception exception)
            {
                // Refused before anything was written (the logger failed earlier): nothing of it can be on disk.
                core.Logger.LogCritical(exception, "Commit record of transaction {Tid} could not be queued; aborting it", txn.Tid);
                return new TransactionAbortedException(txn.Tid, AbortReason.LogWriteFailed, $"its commit could not be logged: {exception.Message}");
            }
        }
        else if (Runtime.Log.Enabled)
        {
            // Read-only: nothing to log, but what it read may come from a transaction whose commit record is not
            // durable yet; its client hears only once that record is.
            durable = Runtime.Log.WhenInOrderDurableAsync();
        }

        Self.End(txn, TxnOutcome.Committed);
        if (writers > 0)
        {
            Self.RememberOutcome(txn.Tid, TxnOutcome.Committed);
            Runtime.Metrics.CommitsSent(writers);

            // Participants on another silo hear "commit" only once the decision is durable: what they install is read
            // by transactions that commit through their own silo's log, which the order of this silo's log does not cover.
            var commit = new ActPhaseRequest(Runtime.CallKeys.Own, txn.Tid, txn.MaxBefore);
            var receivers = new GrainId[writers];
            var sent = new Task[writers];
            var count = SendCommits(commit, participants, votes, onOtherSilos: false, receivers, sent, 0);
            if (writersOnOtherSilos > 0)
            {
                if (await WhenDurableAsync(txn, durable, wroteAnything: true) is { } notDurable)
                {
                    return notDurable; // they ask the first actor (Resolve) in time
                }

                durable = null;
                SendCommits(commit, participants, votes, onOtherSilos: true, receivers, sent, count);
            }

            try
            {
                await Task.WhenAll(sent).WaitAsync(Runtime.Options.PrepareTimeout);
            }
            catch (Exception exception)
            {
                core.Logger.LogDebug(exception, "Commit of transaction {Tid}: not every participant acknowledged", txn.Tid);
            }

            core.ActTrace?.Invoke(core.Self, txn.Tid, $"commit acknowledged by {string.Join(", ", receivers.Where((_, i) => sent[i].IsCompletedSuccessfully))}; not by {string.Join(", ", receivers.Where((_, i) => !sent[i].IsCompletedSuccessfully))}");
            if (Array.TrueForAll(sent, s => s.IsCompletedSuccessfully))
            {
                core.ForgetOutcome(txn.Tid);
                Runtime.Log.Acknowledged(txn.Tid);
            }
            else
            {
                // Committed regardless: a participant that missed the message asks this actor (Resolve), which answers
                // from memory, or from the log's record of commits not acknowledged by every participant; each of them
                // gets the message again (ActParticipant.Watch) until it acknowledges it. The commit is closed when the
                // last of them has acknowledged: an answer to a question is not an acknowledgement (see Resolve).
                core.Ended.AwaitAcknowledgements(txn.Tid, receivers.Where((_, i) => !sent[i].IsCompletedSuccessfully), txn.MaxBefore);
                core.Logger.LogWarning("Commit of transaction {Tid} not acknowledged by every participant; they will resolve it", txn.Tid);
            }
        }

        return await WhenDurableAsync(txn, durable, txn.Wrote || writers > 0);
    }

    /// <summary>
    /// The abort a no vote gives: the participant's own reason when it sent one (a PACT batch it read from aborted
    /// before its prepare arrived is a cascading abort, whichever of the two messages came first), else PrepareFailed.
    /// </summary>
    private static TransactionAbortedException Refused(long tid, GrainId participant, PrepareResult vote) => vote.Refusal is { } reason
        ? new TransactionAbortedException(tid, reason, $"participant {participant} voted no: {vote.RefusalMessage}")
        : new TransactionAbortedException(tid, AbortReason.PrepareFailed, $"participant {participant} voted no.");

    /// <summary>The actors the transaction reached besides this one (none without calls: the set is then never made).</summary>
    private GrainId[] OtherParticipants(ActorTransaction<TState> txn)
    {
        if (txn.ParticipantCount == 0)
        {
            return [];
        }

        txn.Participants.Remove(core.Self);
        return [.. txn.Participants];
    }

    /// <summary>The participants that voted prepared (they wrote), and how many of them logged their state on their own silo.</summary>
    private static (int Writers, int OnOtherSilos) CountWriters(PrepareResult[] votes)
    {
        var (writers, onOtherSilos) = (0, 0);
        foreach (var vote in votes)
        {
            if (vote.Vote == PrepareVote.Prepared)
            {
                writers++;
                onOtherSilos += vote.LoggedOnOwnSilo ? 1 : 0;
            }
        }

        return (writers, onOtherSilos);
    }

    /// <summary>
    /// Sends <paramref name="commit"/> to the prepared participants on this silo's log, or, <paramref name="onOtherSilos"/>,
    /// to those that logged on their own silo; fills <paramref name="receivers"/> and <paramref name="sent"/> from
    /// <paramref name="next"/> on and returns the next free place.
    /// </summary>
    private int SendCommits(ActPhaseRequest commit, GrainId[] participants, PrepareResult[] votes, bool onOtherSilos, GrainId[] receivers, Task[] sent, int next)
    {
        for (var i = 0; i < participants.Length; i++)
        {
            if (votes[i].Vote == PrepareVote.Prepared && votes[i].LoggedOnOwnSilo == onOtherSilos)
            {
                receivers[next] = participants[i];
                sent[next++] = SendCommit(participants[i], commit);
            }
        }

        return next;
    }

    private Task SendCommit(GrainId participant, ActPhaseRequest commit)
    {
        var hooks = Runtime.TestHooks;
        if (hooks.WithholdActCommit?.Invoke(participant) == true)
        {
            return Task.FromException(new TimeoutException("withheld by a test"));
        }

        var sent = Runtime.SendCommit(participant, commit);
        return hooks.DropActCommitAcknowledgement?.Invoke(participant) == true
            ? sent.ContinueWith(static _ => throw new TimeoutException("acknowledgement dropped by a test"), TaskScheduler.Default)
            : sent;
    }

    /// <summary>Waits for the commit record (null: nothing to wait for); returns null once durable, else why the client cannot hear "committed".</summary>
    private async Task<SnapperException?> WhenDurableAsync(ActorTransaction<TState> txn, Task? durable, bool wroteAnything)
    {
        if (durable is not null)
        {
            try
            {
                await durable.WaitAsync(Runtime.Options.LogWriteTimeout);
            }
            catch (Logging.LogWriteRefusedException refused)
            {
                // Refused (an earlier write failed): certainly not on disk. Nothing can commit in this silo any more, so
                // no client ever sees what the early lock release installed as committed.
                core.Logger.LogCritical(refused, "Commit record of transaction {Tid} was refused by the log; it is aborted", txn.Tid);
                return new TransactionAbortedException(txn.Tid, AbortReason.LogWriteFailed, $"its commit could not be logged: {refused.Message}");
            }
            catch (Exception exception)
            {
                // The record was queued and may or may not be on disk (a write that failed part way, or a logger that
                // stalled): recovery will commit the transaction if it is. The log refuses every write after a failed
                // one (Logger), so nothing that read these writes can commit meanwhile either.
                core.Logger.LogCritical(exception, "Commit record of transaction {Tid} was not confirmed durable; its outcome is in doubt until the silo restarts", txn.Tid);
                return wroteAnything
                    ? new TransactionInDoubtException(txn.Tid, $"its commit was decided but could not be confirmed durable: {exception.Message}")
                    : new TransactionAbortedException(txn.Tid, AbortReason.LogWriteFailed,
                        $"it only read, but what it read could not be confirmed durable: {exception.Message}");
            }
        }

        return null;
    }

    /// <summary>
    /// Queues the transaction's commit: every prepared participant's new state (carried by its vote), this actor's
    /// own if it wrote, then the commit record, as one append, so recovery finds all of them or none is committed.
    /// With participants to tell, the record says so, and the commit stays open in the log until they acknowledged.
    /// </summary>
    private Task LogCommit(ActorTransaction<TState> txn, GrainId[] participants, PrepareResult[] votes, bool awaitingAcks)
    {
        var records = new List<Logging.LogRecord>(participants.Length + 2);
        for (var i = 0; i < participants.Length; i++)
        {
            if (votes[i] is { Vote: PrepareVote.Prepared, State: { } state, Seq: var seq, StateIncremental: var incremental })
            {
                records.Add(Logging.LogRecord.StateWritten(Logging.LoggedTxnKind.Act, txn.Tid, participants[i], seq, new Logging.LoggedState(state, incremental)));
            }
        }

        if (txn.Wrote)
        {
            records.Add(Logging.LogRecord.StateWritten(Logging.LoggedTxnKind.Act, txn.Tid, core.LogName ?? core.Self.ToString(), core.State.NextSeq(), Runtime.ForLog(txn.Working!)));
        }

        records.Add(awaitingAcks ? Logging.LogRecord.CommittedAwaitingAcks(Logging.LoggedTxnKind.Act, txn.Tid) : Logging.LogRecord.Committed(Logging.LoggedTxnKind.Act, txn.Tid));
        return Runtime.Log.AppendCommitAsync(txn.Tid, awaitingAcks, [.. records]);
    }

    /// <summary>
    /// The hybrid check (<see cref="HybridCheck"/>) and commit rule, once every participant voted: pass the check, then
    /// wait until every batch the ACT read from (its own and the participants' uncommitted ones) is ordered before it:
    /// on this silo, its commit record queued ahead of the one this ACT is about to append (a batch whose record is
    /// queued no longer aborts, and a crash cannot keep this ACT's record without it); on another worker, committed
    /// there (<see cref="Pact.PactService.WhenCommitsOrderedAsync"/>). So with a log the ACT holds its locks for the
    /// batches' execution, not for their fsync. Waiting is safe after the check: every batch waiting for this ACT
    /// comes after every batch it waits for, and nobody waits for its locks meanwhile
    /// (<see cref="WaitDieLock.HolderWaitsForBatches"/>), so no cycle of waits closes through it.
    /// </summary>
    private async Task<TransactionAbortedException?> CheckHybridAsync(ActorTransaction<TState> txn, PrepareResult[] votes)
    {
        if (Runtime.Options.HybridScheduling != Hosting.HybridScheduling.SerializabilityCheck || Runtime.TestHooks.SkipHybridGate
            || (!txn.ReadUncommitted && txn.MaxBefore.IsNone))
        {
            return null; // (or read no uncommitted batch anywhere, so it has nothing to check and waits for none)
        }

        var pacts = Runtime.Pacts;
        var (ownPending, ownAborted) = Self.ReadFromOutcome(txn);
        if (ownAborted)
        {
            return new TransactionAbortedException(txn.Tid, AbortReason.CascadingAbort, $"PACT batch {txn.ReadFromBid}, whose writes it read on actor {core.Self}, aborted.");
        }

        var maxBefore = txn.MaxBefore;
        if (!maxBefore.IsNone && Check(txn, votes, maxBefore) is { } notSerializable)
        {
            return notSerializable;
        }

        var pending = votes.Where(v => v.ReadFromBid >= 0).Select(v => (v.Worker, Bid: v.ReadFromBid));
        if (ownPending >= 0)
        {
            pending = pending.Append((pacts.WorkerIndex, ownPending));
        }

        var waits = pending.GroupBy(p => p.Worker, p => p.Bid).Select(g => pacts.WhenCommitsOrderedAsync(g.Key, [.. g.Distinct()])).ToArray();
        if (waits.Length == 0)
        {
            return null;
        }

        // Whoever waits for this ACT's locks would now wait for batches that may wait for it: they give way.
        core.HolderWaitsForBatches(txn);
        var waitingSince = Runtime.Metrics.ActWaitsForCommits();
        try
        {
            var committed = await Task.WhenAll(waits).WaitAsync(Runtime.Options.ExecutionTimeout);
            return committed.All(c => c) ? null
                : new TransactionAbortedException(txn.Tid, AbortReason.CascadingAbort, "a PACT batch whose writes it read aborted (or its commit was not confirmed).");
        }
        catch (TimeoutException)
        {
            return new TransactionAbortedException(txn.Tid, AbortReason.HybridDeadlock,
                $"the PACT batches whose writes it read did not commit within {Runtime.Options.ExecutionTimeout}.");
        }
        catch (Exception exception)
        {
            return new TransactionAbortedException(txn.Tid, AbortReason.PrepareFailed,
                $"another worker could not say whether the PACT batches whose writes it read committed: {exception.Message}", exception);
        }
        finally
        {
            Runtime.Metrics.ActWaitedForCommits(waitingSince);
        }
    }

    /// <summary>The check itself: max(BS) against min(AS) of every actor's part.</summary>
    private TransactionAbortedException? Check(ActorTransaction<TState> txn, PrepareResult[] votes, BatchPosition maxBefore)
    {
        var (ownMin, ownComplete) = Self.AfterSetPart(txn);
        var (minAfter, complete) = HybridCheck.CombineAfterSets(ownMin, ownComplete, votes.Select(v => (v.MinAfter, v.AfterSetComplete)));
        var verdict = HybridCheck.Check(maxBefore, minAfter, complete, Runtime.Batches.IsResolved(maxBefore));
        return verdict.Passed ? null : new TransactionAbortedException(txn.Tid, verdict.Reason, verdict.Why!);
    }

    public async Task AbortEverywhereAsync(ActorTransaction<TState> txn, TransactionAbortedException reason)
    {
        core.ActTrace?.Invoke(core.Self, txn.Tid, $"aborts everywhere: {reason.Reason} {reason.Message}");
        txn.Doom(reason);
        Self.End(txn, TxnOutcome.Aborted);
        await AbortParticipantsAsync(txn.Tid, OtherParticipants(txn));
    }

    public async Task AbortParticipantsAsync(long tid, IEnumerable<GrainId> participants)
    {
        var others = participants.Where(p => p != core.Self).ToArray();
        if (others.Length == 0)
        {
            return;
        }

        try
        {
            await Task.WhenAll(others.Select(p => Runtime.Participant(p).Abort(Runtime.CallKeys.Own, tid))).WaitAsync(Runtime.Options.PrepareTimeout);
        }
        catch (Exception exception)
        {
            // Presumed abort: a participant that missed this aborts on its own after ParticipantTimeout.
            core.Logger.LogWarning(exception, "Abort of transaction {Tid} not acknowledged by every participant", tid);
        }
    }
}
