using Microsoft.Extensions.Logging;
using Snapper.Actors;
using Snapper.Hybrid;

namespace Snapper.Act;

/// <summary>
/// The ACT side of one actor (thesis §3.3.3): the transactions running on it, their S2PL locks, and its part in
/// two-phase commit as a participant (prepare, commit, abort, resolve). The first actor of an ACT uses the same
/// bookkeeping for itself (<see cref="ActCoordinator{TState}"/> drives the commit).
/// </summary>
/// <remarks>
/// Invariants:
/// <list type="bullet">
/// <item>No transaction sees another's uncommitted writes: writes go to a private copy, installed at commit while the
/// writer still holds the exclusive lock (strict 2PL).</item>
/// <item>Locks are released only when the transaction ends here (<see cref="End"/>): at commit, at abort, or at
/// prepare for a participant that only read.</item>
/// <item>A participant that has not prepared gives up on its own after <c>ParticipantTimeout</c> (presumed abort);
/// one that has prepared waits for the decision and asks the first actor after <c>DecisionTimeout</c>.</item>
/// </list>
/// Runs only in turns of the activation that owns the core (see <see cref="ActorCore{TState}"/>).
/// </remarks>
internal sealed class ActParticipant<TState>(ActorCore<TState> core) where TState : class
{
    private SnapperRuntime Runtime => core.Runtime;

    private bool CheckingHybrid => Runtime.Options.HybridScheduling == Hosting.HybridScheduling.SerializabilityCheck;

    public ActorTransaction<TState> Begin(TxnContext context, bool isRoot)
    {
        var txn = new ActorTransaction<TState>(context, isRoot);
        core.Transactions.Add(context.Tid, txn);
        core.ActTrace?.Invoke(core.Self, context.Tid, isRoot ? "begins as first actor" : $"begins as participant of {context.Root}");
        if (!isRoot)
        {
            txn.FirstActorSilo = Runtime.FirstActorSilo(context.Root);
            core.StartWatch();
        }

        return txn;
    }

    /// <summary>The running transaction of <paramref name="context"/> here.</summary>
    /// <exception cref="TransactionNotActiveException">It is not running here (ended, or the context was kept).</exception>
    public ActorTransaction<TState> RequireActive(TxnContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        if (!core.Transactions.TryGetValue(context.Tid, out var txn))
        {
            throw new TransactionNotActiveException(context.Tid, core.Ended.TryGet(context.Tid, out var outcome)
                ? $"it already ended on this actor ({outcome})."
                : "it already ended, or its context reached this actor other than through StartTxn or CallActor.");
        }

        if (txn.Phase != ActorTxnPhase.Active)
        {
            throw (SnapperException?)txn.Doomed ?? new TransactionNotActiveException(context.Tid, $"it is {txn.Phase} and can no longer run methods.");
        }

        return txn;
    }

    /// <summary>Ends the transaction here: installs its copy if it committed a write, releases its lock, leaves the schedule.</summary>
    public void End(ActorTransaction<TState> txn, TxnOutcome outcome)
    {
        var install = outcome == TxnOutcome.Committed && txn.Wrote && txn.Working is not null;
        if (install)
        {
            core.State.InstallAct(txn.Working!, txn.ReadFromBid);
        }

        core.ActTrace?.Invoke(core.Self, txn.Tid, $"ends {outcome} in phase {txn.Phase}, wrote {txn.Wrote}, installed {install}{(txn.Doomed is { } doomed ? $", doomed: {doomed.Reason} {doomed.Message}" : "")}");

        if (txn.PreparedHere)
        {
            LogOutcomeHere(txn, outcome);
        }

        txn.Phase = ActorTxnPhase.Ended;
        core.Transactions.Remove(txn.Tid);
        core.StopWatchIfIdle();
        core.Lock.Release(txn.Tid, txn.Doomed);
        core.ReleaseKeys(txn);
        if (txn.Admitted)
        {
            txn.Admitted = false;
            core.Schedule.ExitAct(txn.Tid, outcome == TxnOutcome.Committed ? txn.MaxBefore : BatchPosition.None);
        }
    }

    /// <summary>
    /// The outcome of a participant that logged its prepared state on this silo while its first actor is on another:
    /// a commit record here (awaited before the commit is acknowledged, so the first actor's open commit outlives this
    /// silo's need for it), or an abort record, which nobody waits for (without it, recovery asks the first actor).
    /// </summary>
    private void LogOutcomeHere(ActorTransaction<TState> txn, TxnOutcome outcome)
    {
        if (outcome == TxnOutcome.Aborted)
        {
            Runtime.Log.AppendWithoutWaiting(Logging.LogRecord.Aborted(Logging.LoggedTxnKind.RemoteAct, txn.Tid));
            return;
        }

        try
        {
            txn.OutcomeLogging = Runtime.Log.AppendInOrderAsync(Logging.LogRecord.Committed(Logging.LoggedTxnKind.RemoteAct, txn.Tid));
        }
        catch (Exception exception)
        {
            txn.OutcomeLogging = Task.FromException(exception);
        }
    }

    public void RememberOutcome(long tid, TxnOutcome outcome)
    {
        core.Ended.Record(tid, outcome);
        core.StartWatch();
    }

    /// <summary>
    /// This actor's part of the ACT's AfterSet: the first batch after it here (none if none), and whether the part is
    /// complete for the check. The silo's emission frontier is read before the schedule: every batch emitted before
    /// is then in the schedule already, and every later one comes after the frontier, so if the frontier is at or after
    /// max(BS), batches after the ACT still to come are later than max(BS). In-order delivery inside the silo makes
    /// this exact where the thesis, with asynchronous batch messages, had to treat the part as unknown (its
    /// incomplete-AfterSet case); in a cluster it still is unknown when max(BS) is a global batch this worker has not
    /// emitted yet.
    /// </summary>
    public (BatchPosition MinAfter, bool Complete) AfterSetPart(ActorTransaction<TState> txn)
    {
        if (!txn.Admitted)
        {
            return (BatchPosition.None, true); // it never used this actor's state: no batch can come after it here
        }

        var frontier = Runtime.Batches.EmissionFrontier(txn.MaxBefore);
        var minAfter = core.Schedule.MinAfter(txn.Tid);
        return (minAfter, HybridCheck.IsAfterSetPartComplete(minAfter, frontier, txn.MaxBefore));
    }

    /// <summary>
    /// The commit rule's part of this actor (thesis §3.3.4.4): the batch the ACT read from here if it has not resolved
    /// yet (its bid, for the first actor to wait on; -1 if there is none or it committed), and whether it aborted.
    /// </summary>
    public (long PendingBid, bool Aborted) ReadFromOutcome(ActorTransaction<TState> txn)
    {
        if (!CheckingHybrid || txn.ReadFromBid < 0)
        {
            return (-1, false);
        }

        var resolved = Runtime.Batches.WhenResolvedAsync(txn.ReadFromBid);
        return !resolved.IsCompletedSuccessfully ? (txn.ReadFromBid, false) : (-1, !resolved.Result);
    }

    public Task<PrepareResult> Prepare(long tid, BatchPosition maxBefore, bool readUncommitted)
    {
        if (!core.Transactions.TryGetValue(tid, out var txn) || txn.Phase != ActorTxnPhase.Active || txn.IsRoot)
        {
            core.ActTrace?.Invoke(core.Self, tid, $"votes no at prepare: {(txn is null ? "not running here" : $"{txn.Phase}, first actor {txn.IsRoot}")}");
            return Task.FromResult(PrepareResult.No());
        }

        if (txn.Doomed is not null || txn.RunningMethods > 0 || txn.OutstandingCalls > 0)
        {
            // Still running here although its first method returned: a call was not awaited somewhere.
            txn.Doom(txn.Doomed ?? new TransactionAbortedException(tid, AbortReason.UnawaitedCall, "a method was still running at prepare."));
            End(txn, TxnOutcome.Aborted);
            return Task.FromResult(PrepareResult.No(txn.Doomed));
        }

        txn.DependsOn(maxBefore);
        var (readFrom, readFromAborted) = ReadFromOutcome(txn);
        if (readFromAborted)
        {
            txn.Doom(new TransactionAbortedException(tid, AbortReason.CascadingAbort, $"PACT batch {txn.ReadFromBid}, whose writes it read on actor {core.Self}, aborted."));
            End(txn, TxnOutcome.Aborted);
            return Task.FromResult(PrepareResult.No(txn.Doomed));
        }

        // Without a max(BeforeSet) the first actor runs no check, so the part is not needed.
        var (minAfter, complete) = CheckingHybrid && !txn.MaxBefore.IsNone ? AfterSetPart(txn) : (BatchPosition.None, false);
        if (CheckingHybrid && txn.Wrote && (readUncommitted || txn.ReadUncommitted) && !Runtime.Batches.IsResolved(txn.MaxBefore))
        {
            // The first actor may wait for the batches the ACT read from with this lock held (see ActCoordinator).
            core.HolderWaitsForBatches(txn);
        }

        var vote = new PrepareResult(PrepareVote.ReadOnly, minAfter, complete,
            Worker: Runtime.Pacts.WorkerIndex, ReadFromBid: readFrom);
        core.ActTrace?.Invoke(core.Self, tid, $"votes {(txn.Wrote ? "prepared" : "read-only")} at prepare, read from batch {readFrom}");
        if (!txn.Wrote)
        {
            End(txn, TxnOutcome.Committed);
            return Task.FromResult(vote);
        }

        txn.Phase = ActorTxnPhase.Prepared;
        txn.Touch();
        var prepared = vote with { Vote = PrepareVote.Prepared };
        if (!Runtime.Log.Enabled)
        {
            return Task.FromResult(prepared);
        }

        // With one ordered logger the vote carries the new state and the first actor logs it with the decision (see
        // ActCoordinator); with several, the participant makes it durable on its own logger before voting; and with
        // the first actor on another silo, on this silo's log before voting, marked as decided there.
        var state = Runtime.ForLog(txn.Working!);
        var seq = core.State.NextSeq();
        if (Runtime.DecidedElsewhere(core.Self, txn.Context.Root))
        {
            txn.PreparedHere = true;
            return LogPreparedAsync(txn, prepared with { LoggedOnOwnSilo = true },
                Logging.LogRecord.RemoteActStateWritten(tid, core.Self, seq, state, txn.Context.Root), ownSilo: true);
        }

        return Runtime.Log.StatesDurableBeforeVote
            ? LogPreparedAsync(txn, prepared, Logging.LogRecord.StateWritten(Logging.LoggedTxnKind.Act, tid, core.Self, seq, state), ownSilo: false)
            : Task.FromResult(prepared with { State = state.Bytes, StateIncremental = state.Incremental, Seq = seq });
    }

    /// <summary>
    /// A participant's Prepare record (its new state), durable before it votes yes: on its own logger (several loggers),
    /// or, <paramref name="ownSilo"/>, on this silo's ordered log because the decision is logged on another silo.
    /// </summary>
    private async Task<PrepareResult> LogPreparedAsync(ActorTransaction<TState> txn, PrepareResult vote, Logging.LogRecord state, bool ownSilo)
    {
        try
        {
            var written = ownSilo ? Runtime.Log.AppendInOrderAsync(state) : Runtime.Log.AppendStateAsync(core.Self, state);
            await written.WaitAsync(Runtime.Options.LogWriteTimeout);
        }
        catch (Exception exception)
        {
            core.Logger.LogError(exception, "Prepare record of transaction {Tid} could not be written; voting no", txn.Tid);
            txn.Doom(new TransactionAbortedException(txn.Tid, AbortReason.PrepareFailed, $"its prepare could not be logged: {exception.Message}"));
            if (txn.Phase == ActorTxnPhase.Prepared)
            {
                End(txn, TxnOutcome.Aborted);
            }

            return PrepareResult.No(txn.Doomed);
        }

        // Aborted while the record was written (the first actor gave up): the record is harmless without a commit.
        return txn.Phase == ActorTxnPhase.Prepared ? vote : PrepareResult.No(txn.Doomed);
    }

    public Task Commit(long tid, BatchPosition maxBefore)
    {
        core.ActTrace?.Invoke(core.Self, tid, $"hears commit: {(core.Transactions.TryGetValue(tid, out var heard) ? heard.Phase.ToString() : core.Ended.TryGet(tid, out var ended) ? $"ended {ended}" : "unknown here")}");
        if (core.Transactions.TryGetValue(tid, out var txn) && txn.Phase == ActorTxnPhase.Prepared)
        {
            txn.DependsOn(maxBefore);
            End(txn, TxnOutcome.Committed);

            // Acknowledged only once this silo's own commit record is durable: the first actor closes its open commit
            // on the acknowledgement, after which nobody could tell this silo's recovery the outcome.
            if (txn.OutcomeLogging is { } logged)
            {
                return logged.WaitAsync(Runtime.Options.LogWriteTimeout);
            }
        }

        return Task.CompletedTask;
    }

    public Task Abort(long tid)
    {
        core.ActTrace?.Invoke(core.Self, tid, $"hears abort: {(core.Transactions.TryGetValue(tid, out var heard) ? heard.Phase.ToString() : "unknown here")}");
        if (core.Transactions.TryGetValue(tid, out var txn) && !txn.IsRoot)
        {
            txn.Doom(new TransactionAbortedException(tid, AbortReason.PrepareFailed, "aborted by its first actor."));
            End(txn, TxnOutcome.Aborted);
        }

        return Task.CompletedTask;
    }

    /// <summary>
    /// Asked of the first actor by a prepared participant that waited too long for the decision. Answered from the
    /// running transaction, then from the outcomes remembered here, then from the write-ahead log's record of commits
    /// not yet acknowledged by every participant (it outlives memory pruning and silo restarts); a transaction none of
    /// them knows was never committed (presumed abort: a commit stays in that record until every participant acknowledged it).
    /// </summary>
    /// <remarks>
    /// Answering "committed" is not an acknowledgement: the answer may arrive after the participant stopped waiting for it,
    /// and a participant asks again every round it is still prepared, so a later question of the same participant can
    /// arrive once an earlier one was answered. Had the answer closed the commit, that later question would hear "aborted"
    /// (presumed abort) and the participant would drop a committed write. Only the participant's answer to a commit message
    /// closes it (<see cref="ActCoordinator{TState}"/>, <see cref="Watch"/> sending it again), given once it has applied it.
    /// </remarks>
    public Task<TxnOutcome> Resolve(long tid, GrainId participant)
    {
        if (core.Transactions.TryGetValue(tid, out var txn))
        {
            if (txn.CommitLogging is not null)
            {
                // Decided, and the commit record queued: the participant may install its state now, as the commit
                // message would let it (early lock release, see ActCoordinator's decision).
                core.ActTrace?.Invoke(core.Self, tid, $"asked by {participant}: committed (commit record queued)");
                return Task.FromResult(TxnOutcome.Committed);
            }

            // Undecided: deciding "abort" now is always safe, and the first actor will act on it.
            txn.Doom(new TransactionAbortedException(tid, AbortReason.ParticipantTimeout, "a participant timed out waiting for the decision."));
            core.ActTrace?.Invoke(core.Self, tid, $"asked by {participant} in phase {txn.Phase}: aborted (undecided, now doomed)");
            return Task.FromResult(TxnOutcome.Aborted);
        }

        if (core.Ended.TryGet(tid, out var outcome))
        {
            core.ActTrace?.Invoke(core.Self, tid, $"asked by {participant}: {outcome} (remembered)");
            return Task.FromResult(outcome);
        }

        var logged = Runtime.Log.IsUnacknowledgedCommit(tid) ? TxnOutcome.Committed : TxnOutcome.Aborted;
        core.ActTrace?.Invoke(core.Self, tid, $"asked by {participant}: {logged} (not remembered; from the log)");
        return Task.FromResult(logged);
    }

    /// <summary>
    /// One round of the participant watchdog: aborts unprepared transactions idle past ParticipantTimeout, asks the
    /// first actor about prepared ones past DecisionTimeout, sends unacknowledged commits again, prunes remembered
    /// outcomes. Run by <see cref="ParticipantWatchdog"/> in a turn of <paramref name="activation"/>.
    /// </summary>
    public void Watch(object activation)
    {
        var options = Runtime.Options;
        var now = Environment.TickCount64;
        foreach (var txn in core.Transactions.Values.Where(t => !t.IsRoot).ToArray())
        {
            var idle = TimeSpan.FromMilliseconds(now - txn.LastActivity);

            // The first actor's silo died (another silo, or none, serves its worker now): the transaction's decision is
            // taken there or nowhere, so there is no point in waiting out the bounds below.
            var firstActorLost = false;
            if (txn.FirstActorSilo is { } silo && Runtime.FirstActorSilo(txn.Context.Root) is var serving && serving != silo)
            {
                firstActorLost = true;
                txn.FirstActorSilo = serving; // acted on once per change
            }

            var givesUp = idle > options.ParticipantTimeout || Runtime.TestHooks.ParticipantGivesUp?.Invoke(core.Self, txn.Tid) == true;
            if (txn.Phase == ActorTxnPhase.Active && txn.RunningMethods == 0 && (givesUp || firstActorLost))
            {
                core.Logger.LogWarning("Transaction {Tid} idle for {Idle} without a decision{Why}; aborting it here", txn.Tid, idle,
                    firstActorLost ? ", and its first actor's silo stopped" : "");
                core.ActTrace?.Invoke(core.Self, txn.Tid, $"aborts on its own: idle {idle}, first actor lost {firstActorLost}");
                txn.Doom(new TransactionAbortedException(txn.Tid, AbortReason.ParticipantTimeout, firstActorLost
                    ? "its first actor's silo stopped before it prepared."
                    : $"no prepare within {options.ParticipantTimeout}."));
                End(txn, TxnOutcome.Aborted);
                RememberOutcome(txn.Tid, TxnOutcome.Aborted);
            }
            else if (txn.Phase == ActorTxnPhase.Prepared && (idle > options.DecisionTimeout || firstActorLost))
            {
                // Prepared, it may only learn the outcome: asked of the first actor's worker (its log answers after a restart).
                txn.Touch();
                core.ActTrace?.Invoke(core.Self, txn.Tid, $"asks the first actor: prepared and idle {idle}, first actor lost {firstActorLost}");
                _ = ResolvePreparedAsync(txn, activation);
            }
        }

        // A participant that committed but whose acknowledgement was lost (its silo died just after its commit record,
        // or the answer was late) never asks: after the time a prepared one waits before asking, it hears the commit again.
        // Until every participant acknowledged, the commit stays open, and this actor cannot be migrated.
        foreach (var (tid, waiting, maxBefore) in core.Ended.ToSendAgain(options.DecisionTimeout))
        {
            foreach (var participant in waiting)
            {
                _ = SendCommitAgainAsync(tid, participant, maxBefore, activation);
            }
        }

        // Without a log nothing else can answer for a commit a participant has not acknowledged: it is kept until it is.
        core.Ended.Prune(options.OutcomeRetention, keepUnacknowledged: !Runtime.Log.Enabled);
    }

    private async Task SendCommitAgainAsync(long tid, GrainId participant, BatchPosition maxBefore, object activation)
    {
        try
        {
            if (Runtime.TestHooks.WithholdActCommit?.Invoke(participant) == true)
            {
                return;
            }

            await Runtime.SendCommit(participant, new ActPhaseRequest(Runtime.CallKeys.Own, tid, maxBefore)).WaitAsync(Runtime.Options.PrepareTimeout);
            if (core.IsOwnedBy(activation))
            {
                Acknowledged(tid, participant);
            }
        }
        catch (Exception exception)
        {
            core.Logger.LogDebug(exception, "Commit of transaction {Tid} sent again to {Participant}, not acknowledged; will send again", tid, participant);
        }
    }

    /// <summary><paramref name="participant"/> applied the commit of <paramref name="tid"/>; the last one to do so closes the commit.</summary>
    private void Acknowledged(long tid, GrainId participant)
    {
        if (core.Ended.Acknowledge(tid, participant))
        {
            core.ForgetOutcome(tid);
            Runtime.Log.Acknowledged(tid);
        }
    }

    private async Task ResolvePreparedAsync(ActorTransaction<TState> txn, object activation)
    {
        try
        {
            var outcome = await Runtime.Participant(txn.Context.Root).Resolve(Runtime.CallKeys.Own, txn.Tid, core.Self).WaitAsync(Runtime.Options.PrepareTimeout);
            core.ActTrace?.Invoke(core.Self, txn.Tid, $"told {outcome} by the first actor, phase now {txn.Phase}, owned {core.IsOwnedBy(activation)}");

            // The activation that asked may have ended by now: the actor's next activation asks again itself.
            if (core.IsOwnedBy(activation) && txn.Phase == ActorTxnPhase.Prepared)
            {
                End(txn, outcome);
            }
        }
        catch (Exception exception)
        {
            core.Logger.LogWarning(exception, "Could not resolve prepared transaction {Tid}; will ask again", txn.Tid);
            core.ActTrace?.Invoke(core.Self, txn.Tid, $"could not ask the first actor: {exception.GetType().Name}");
        }
    }
}
