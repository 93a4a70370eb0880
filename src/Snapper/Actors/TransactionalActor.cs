using System.Runtime.CompilerServices;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Orleans.Concurrency;
using Snapper.Act;

namespace Snapper;

/// <summary>
/// Base class of a transactional actor (thesis §3.2.2.2). Derive from it, implement your interface that
/// derives from <see cref="ITransactionalActor"/>, read and write the state only through
/// <see cref="GetState"/>, and call other actors only through <c>CallActor</c>.
/// Clients start transactions with <c>actor.StartTxn(actor.Method, input)</c>.
/// </summary>
/// <typeparam name="TState">
/// The actor's state: a class Orleans can copy (mark it <c>[GenerateSerializer]</c>). <see cref="GetState"/>
/// returns the transaction's own copy; change it in place. The copy replaces the committed state only if
/// the transaction commits.
/// </typeparam>
/// <remarks>
/// The grain is reentrant: methods of different transactions interleave at awaits, and concurrency control
/// decides who may touch the state. Invariants (ACT, thesis §3.3.3):
/// <list type="bullet">
/// <item>No transaction sees another's uncommitted writes: writes go to a private copy, installed at commit
/// while the writer still holds the exclusive lock (strict 2PL).</item>
/// <item>Locks are released only when the transaction ends here: at commit, at abort, or at prepare for a
/// participant that only read.</item>
/// <item>The first actor knows every participant before it starts 2PC: each call returns the participants
/// it touched, and a method may not return while a call it started is still running.</item>
/// <item>Every wait is bounded by a <see cref="Hosting.SnapperOptions"/> timeout that ends in an abort.</item>
/// </list>
/// </remarks>
[Reentrant]
[KeepAlive] // The committed state lives in memory; the write-ahead log is read back only when the silo starts.
public abstract partial class TransactionalActor<TState> : Grain, ITransactionalActor, IActParticipant
    where TState : class, new()
{
    private readonly Dictionary<long, Actors.ActorTransaction<TState>> _transactions = new();
    // Only outcomes a late message could need: commits not yet acknowledged by every prepared participant
    // (a participant may ask Resolve), and transactions this actor aborted on its own (a late call must be
    // refused, not start the transaction afresh). Presumed abort covers everything else.
    private readonly RecentOutcomes _ended = new();
    private readonly WaitDieLock _lock = new();
    private Actors.SnapperRuntime _runtime = null!;
    private Actors.TransactionalMethodTable _methods = null!;
    private ILogger _logger = null!;
    private GrainId _self;
    private Scheduling.ActorSchedule _schedule = null!;
    private Scheduling.StateVersions<TState> _state = null!;
    private IGrainTimer? _watchdog;

    /// <summary>The committed state as of now, outside any transaction. For inspection only; it is not locked.</summary>
    protected TState CommittedState => _state.Committed;

    /// <inheritdoc />
    public override Task OnActivateAsync(CancellationToken cancellationToken)
    {
        _runtime = ServiceProvider.GetService<Actors.SnapperRuntime>()
            ?? throw new SnapperException("Snapper is not configured in this silo: call siloBuilder.AddSnapper().");
        _methods = _runtime.Methods.For(GetType());
        _logger = ServiceProvider.GetRequiredService<ILoggerFactory>().CreateLogger(GetType());
        _self = this.GetGrainId();
        _schedule = _runtime.Pacts.ScheduleOf(_self);
        var recovered = _runtime.Log.Enabled ? _runtime.Log.Recovered(_self) : null;
        var initial = recovered?.State is { } logged ? _runtime.Deserialize<TState>(logged) : CreateInitialState();
        _state = new Scheduling.StateVersions<TState>(_schedule.Gate, initial, _runtime.Copy, recovered?.MaxSeq ?? 0);
        _schedule.Attach(_state);
        return base.OnActivateAsync(cancellationToken);
    }

    /// <summary>The state of an actor that no transaction has written yet. Default: <c>new TState()</c>.</summary>
    protected virtual TState CreateInitialState() => new();

    /// <summary>
    /// Gives the transaction access to this actor's state (thesis Fig. 3.1). Waits for the lock as S2PL with
    /// wait-die requires; returns the transaction's own copy of the state, the same object on every call.
    /// </summary>
    /// <exception cref="TransactionAbortedException">The transaction must abort (wait-die, lock timeout, or it was aborted meanwhile).</exception>
    /// <exception cref="TransactionNotActiveException">The context's transaction is not running on this actor.</exception>
    protected async Task<TState> GetState(TxnContext context, AccessMode mode)
    {
        ArgumentNullException.ThrowIfNull(context);
        if (context.Mode == TxnMode.Pact)
        {
            // A PACT's turn was granted when its call entered the schedule; the mode needs no lock. The check
            // and the hand-out are one step under the schedule's lock: a cascading abort between them would
            // otherwise give an aborted PACT the fresh copy the next batch is about to work on.
            lock (_schedule.Gate)
            {
                return _schedule.IsRunning(context.Tid)
                    ? _state.ForPact()
                    : throw new TransactionNotActiveException(context.Tid, "it is not running a method on this actor (it ended, or the context was kept).");
            }
        }

        var txn = RequireActive(context);
        var unlocked = mode == AccessMode.Read && _runtime.Options.UnsafeSkipReadLocks;
        if (!unlocked && !_lock.Holds(txn.Tid, mode))
        {
            try
            {
                if (!txn.Admitted)
                {
                    await _schedule.EnterActAsync(txn.Tid, HybridWaitFor(txn));
                    if (txn.Phase != Actors.ActorTxnPhase.Active)
                    {
                        // Ended while it waited: End did not know it was let in, so leave here, or batches would wait forever.
                        _schedule.ExitAct(txn.Tid, -1);
                        throw (SnapperException?)txn.Doomed ?? new TransactionNotActiveException(txn.Tid, "it ended while waiting for PACT batches.");
                    }

                    txn.Admitted = true;
                }

                await _lock.AcquireAsync(txn.Tid, mode, _runtime.Options.LockWaitTimeout);
                if (CheckingHybrid)
                {
                    // After the lock: every ACT that conflicts with this one and came first has ended here by now.
                    var before = _schedule.MaxBeforeBid(txn.Tid);
                    txn.DependsOn(before, before);
                }
            }
            catch (TransactionAbortedException abort)
            {
                txn.Doom(abort);
                throw;
            }

            if (txn.Phase != Actors.ActorTxnPhase.Active)
            {
                // Aborted while it waited; the lock was released with it.
                throw (SnapperException?)txn.Doomed ?? new TransactionNotActiveException(txn.Tid, "it ended while waiting for the lock.");
            }
        }

        txn.Touch();
        if (mode == AccessMode.ReadWrite)
        {
            txn.Wrote = true;
        }

        return txn.Working ??= _state.ForAct();
    }

    private bool CheckingHybrid => _runtime.Options.HybridScheduling == Hosting.HybridScheduling.SerializabilityCheck;

    /// <summary>How long an ACT may wait for the batches before it on this actor (thesis §3.3.4.2: the bound breaks ACT-batch deadlocks).</summary>
    private TimeSpan HybridWaitFor(Actors.ActorTransaction<TState> txn)
    {
        if (CheckingHybrid)
        {
            return _runtime.Options.HybridWaitTimeout;
        }

        // Waiting for batches to commit: only an ACT that holds nothing anywhere can wait without risking a cycle
        // (a batch waiting for it); the first actor knows that before its first call.
        var holdsNothing = txn.IsRoot && txn.Participants.Count == 0 && txn.OutstandingCalls == 0;
        return holdsNothing ? _runtime.Options.HybridWaitTimeout : TimeSpan.Zero;
    }

    /// <summary>
    /// Calls a transactional method of another actor (or of this one) inside the transaction (thesis Fig. 3.1).
    /// Name the method by its method group on the actor reference, as in <c>CallActor(ctx, account.Deposit, 10m)</c>.
    /// Calls may run in parallel (<c>Task.WhenAll</c>), but each must be awaited before the method returns.
    /// </summary>
    /// <exception cref="TransactionAbortedException">The call failed; the whole transaction will abort, even if this is caught.</exception>
    // A method returning Task<T> also converts to the Task overload, which C# would otherwise prefer.
    [OverloadResolutionPriority(1)]
    protected async Task<TResult> CallActor<TInput, TResult>(TxnContext context, Func<TxnContext, TInput, Task<TResult>> method, TInput input)
    {
        var actor = TransactionalMethod.TargetOf(method);
        var result = await CallCore(context, actor, TransactionalMethod.NameOf(actor, method), input);
        return result is null ? default! : (TResult)result;
    }

    /// <summary>Calls a transactional method that returns no result; see <see cref="CallActor{TInput, TResult}"/>.</summary>
    protected Task CallActor<TInput>(TxnContext context, Func<TxnContext, TInput, Task> method, TInput input)
    {
        var actor = TransactionalMethod.TargetOf(method);
        return CallCore(context, actor, TransactionalMethod.NameOf(actor, method), input);
    }

    async Task<TxnResponse> ITransactionalActor.StartTxn(TxnRequest request)
    {
        var method = _methods.Resolve(request.Method, request.Input);
        var input = _runtime.CopyValue(request.Input);
        if (request.AccessInfo is { } accessInfo)
        {
            return await RunPactAsync(method, input, accessInfo);
        }

        var context = await _runtime.CoordinatorFor(_self).NewAct(_self);
        var txn = Begin(context, isRoot: true);
        var (result, failure) = await RunMethodAsync(txn, method, input, _runtime.Options.ExecutionTimeout);
        failure ??= await CommitAsync(txn);
        if (failure is not null)
        {
            await AbortEverywhereAsync(txn, failure);
            _runtime.Metrics.Aborted(context.Mode, failure.Reason);
            throw failure;
        }

        _runtime.Metrics.Committed(context.Mode);
        return new TxnResponse(_runtime.CopyValue(result));
    }

    async Task<CallResponse> ITransactionalActor.ExecuteCall(CallRequest request)
    {
        var method = _methods.Resolve(request.Method, request.Input);
        var context = request.Context;
        var input = _runtime.CopyValue(request.Input);
        if (context.Mode == TxnMode.Pact)
        {
            var (pactResult, pactFailure, entered) = await RunPactMethodAsync(context, method, input);
            if (entered)
            {
                _schedule.Exit(context.Tid);
            }

            return new CallResponse(_runtime.CopyValue(pactResult), [], pactFailure);
        }

        if (!_transactions.TryGetValue(context.Tid, out var txn))
        {
            if (_ended.TryGet(context.Tid, out var outcome))
            {
                throw new TransactionNotActiveException(context.Tid, $"it already ended on this actor ({outcome}).");
            }

            txn = Begin(context, isRoot: false);
            EnsureWatchdog();
        }
        else if (txn.Phase != Actors.ActorTxnPhase.Active)
        {
            throw new TransactionNotActiveException(context.Tid, $"it is {txn.Phase} on this actor and takes no more calls.");
        }

        var (result, failure) = await RunMethodAsync(txn, method, input, timeout: null);
        if (failure is not null)
        {
            txn.Doom(failure);
        }

        txn.Participants.Add(_self);
        return new CallResponse(_runtime.CopyValue(result), [.. txn.Participants], failure, txn.MaxBeforeBid, txn.MinBeforeBid);
    }

    /// <summary>Runs one transactional method and classifies how it failed, if it did.</summary>
    private async Task<(object? Result, TransactionAbortedException? Failure)> RunMethodAsync(
        Actors.ActorTransaction<TState> txn, Actors.TransactionalMethodInvoker method, object? input, TimeSpan? timeout)
    {
        txn.RunningMethods++;
        var run = method.Invoke(this, txn.Context, input);
        try
        {
            var result = timeout is { } bound ? await run.WaitAsync(bound) : await run;
            return (result, txn.Doomed ?? UnawaitedCallCheck(txn));
        }
        catch (TimeoutException) when (!run.IsCompleted)
        {
            return (null, new TransactionAbortedException(txn.Tid, AbortReason.ExecutionTimeout, $"its methods ran longer than {timeout}."));
        }
        catch (Exception exception)
        {
            return (null, txn.Doomed ?? Classify(txn.Tid, exception));
        }
        finally
        {
            txn.RunningMethods--;
            txn.Touch();
        }
    }

    private static TransactionAbortedException? UnawaitedCallCheck(Actors.ActorTransaction<TState> txn) =>
        txn.RunningMethods == 1 && txn.OutstandingCalls > 0
            ? new TransactionAbortedException(txn.Tid, AbortReason.UnawaitedCall,
                $"a method returned while {txn.OutstandingCalls} call(s) it started had not finished; await every CallActor.")
            : null;

    private TransactionAbortedException Classify(long tid, Exception exception) => exception switch
    {
        TransactionAbortedException aborted when aborted.Tid == tid => aborted,
        TransactionNotActiveException or TransactionalMethodNotFoundException or TransactionInputException =>
            new TransactionAbortedException(tid, AbortReason.InvalidCall, exception.Message, exception),
        _ when _runtime.CanTravel(exception) =>
            new TransactionAbortedException(tid, AbortReason.UserException, $"{exception.GetType().Name}: {exception.Message}", exception),
        _ => new TransactionAbortedException(tid, $"{exception.GetType().Name}: {exception.Message}", exception.GetType().FullName!),
    };

    private async Task<object?> CallCore(TxnContext context, ITransactionalActor actor, string method, object? input)
    {
        if (context.Mode == TxnMode.Pact)
        {
            return await CallPactAsync(context, actor, method, input);
        }

        var txn = RequireActive(context);
        txn.OutstandingCalls++;
        CallResponse response;
        try
        {
            response = await actor.ExecuteCall(new CallRequest(context, method, input));
        }
        catch (Exception exception)
        {
            // The callee refused the call before joining the transaction (unknown method, wrong input,
            // transaction already ended there), so it holds nothing of it.
            var abort = Classify(context.Tid, exception);
            txn.Doom(abort);
            throw abort;
        }
        finally
        {
            txn.OutstandingCalls--;
            txn.Touch();
        }

        txn.Participants.UnionWith(response.Participants);
        txn.DependsOn(response.MinBeforeBid, response.MaxBeforeBid);
        if (txn.Phase != Actors.ActorTxnPhase.Active)
        {
            // The transaction ended here while the call ran; the actors it reached must not wait for a decision.
            _ = AbortParticipantsAsync(context.Tid, response.Participants);
            throw (SnapperException?)txn.Doomed ?? new TransactionNotActiveException(context.Tid, "it ended while the call was running.");
        }

        if (response.Failure is { } failure)
        {
            txn.Doom(failure);
            throw failure;
        }

        return response.Result;
    }

    /// <summary>
    /// 2PC with presumed abort, run by the first actor, with the hybrid check between the votes and the decision.
    /// Returns null when committed, else why not.
    /// </summary>
    private async Task<TransactionAbortedException?> CommitAsync(Actors.ActorTransaction<TState> txn)
    {
        txn.Participants.Remove(_self);
        txn.Phase = Actors.ActorTxnPhase.Preparing;
        var participants = txn.Participants.ToArray();
        var votes = Array.Empty<PrepareResult>();
        if (participants.Length > 0)
        {
            try
            {
                _runtime.Metrics.PreparesSent(participants.Length);
                votes = await Task.WhenAll(participants.Select(p => _runtime.Participant(p).Prepare(txn.Tid, txn.MaxBeforeBid)))
                    .WaitAsync(_runtime.Options.PrepareTimeout);
            }
            catch (Exception exception)
            {
                return new TransactionAbortedException(txn.Tid, AbortReason.PrepareFailed, $"prepare did not complete: {exception.Message}", exception);
            }

            var refused = Array.FindIndex(votes, v => v.Vote == PrepareVote.No);
            if (refused >= 0)
            {
                return txn.Doomed ?? new TransactionAbortedException(txn.Tid, AbortReason.PrepareFailed, $"participant {participants[refused]} voted no.");
            }
        }

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
        // (WriteAheadLog.AppendInOrderAsync), which a crash cannot keep while losing this one. Taken from the
        // decision on, the outcome is remembered before any commit message so that Resolve answers it.
        var writers = participants.Where((_, i) => votes[i].Vote == PrepareVote.Prepared).ToArray();
        Task? durable = null;
        if (_runtime.Log.Enabled && (txn.Wrote || writers.Length > 0))
        {
            try
            {
                durable = txn.CommitLogging = LogCommit(txn, participants, votes);
            }
            catch (Exception exception)
            {
                _logger.LogCritical(exception, "Commit record of transaction {Tid} could not be queued; aborting it", txn.Tid);
                return new TransactionAbortedException(txn.Tid, AbortReason.LogWriteFailed, $"its commit could not be logged: {exception.Message}", exception);
            }
        }
        else if (_runtime.Log.Enabled)
        {
            // Read-only: nothing to log, but what it read may come from a transaction whose commit record is not
            // durable yet; its client hears only once that record is.
            durable = _runtime.Log.WhenInOrderDurableAsync();
        }

        End(txn, TxnOutcome.Committed);
        if (writers.Length > 0)
        {
            RememberOutcome(txn.Tid, TxnOutcome.Committed);
            _runtime.Metrics.CommitsSent(writers.Length);
            try
            {
                await Task.WhenAll(writers.Select(p => _runtime.Participant(p).Commit(txn.Tid, txn.MaxBeforeBid))).WaitAsync(_runtime.Options.PrepareTimeout);
                _ended.Forget(txn.Tid);
            }
            catch (Exception exception)
            {
                // Committed regardless: a participant that missed the message asks this actor (Resolve),
                // which answers from the remembered outcome until OutcomeRetention passes.
                _logger.LogWarning(exception, "Commit of transaction {Tid} not acknowledged by every participant; they will resolve it", txn.Tid);
            }
        }

        if (durable is not null)
        {
            try
            {
                await durable;
            }
            catch (Exception exception)
            {
                // The log refuses every write after a failed one (Logger), so nothing that read this transaction's
                // writes can commit either; after a restart the transaction is simply absent.
                _logger.LogCritical(exception, "Commit record of transaction {Tid} could not be written; the silo must be restarted", txn.Tid);
                return new TransactionAbortedException(txn.Tid, AbortReason.LogWriteFailed, $"its commit could not be made durable: {exception.Message}", exception);
            }
        }

        return null;
    }

    /// <summary>
    /// Queues the transaction's commit: every prepared participant's new state (carried by its vote), this actor's
    /// own if it wrote, then the commit record, as one append, so recovery finds all of them or none is committed.
    /// </summary>
    private Task LogCommit(Actors.ActorTransaction<TState> txn, GrainId[] participants, PrepareResult[] votes)
    {
        var records = new List<Logging.LogRecord>(participants.Length + 2);
        for (var i = 0; i < participants.Length; i++)
        {
            if (votes[i] is { Vote: PrepareVote.Prepared, State: { } state, Seq: var seq })
            {
                records.Add(Logging.LogRecord.StateWritten(Logging.LoggedTxnKind.Act, txn.Tid, participants[i], seq, state));
            }
        }

        if (txn.Wrote)
        {
            records.Add(Logging.LogRecord.StateWritten(Logging.LoggedTxnKind.Act, txn.Tid, _self, _state.NextSeq(), _runtime.Serialize(txn.Working!)));
        }

        records.Add(Logging.LogRecord.Committed(Logging.LoggedTxnKind.Act, txn.Tid));
        return _runtime.Log.AppendInOrderAsync([.. records]);
    }

    /// <summary>A participant's Prepare record (its new state) on its own logger, durable before it votes yes (several loggers only).</summary>
    private async Task<PrepareResult> LogPreparedAsync(Actors.ActorTransaction<TState> txn, PrepareResult vote, Logging.LogRecord state)
    {
        try
        {
            await _runtime.Log.AppendStateAsync(_self, state);
        }
        catch (Exception exception)
        {
            _logger.LogError(exception, "Prepare record of transaction {Tid} could not be written; voting no", txn.Tid);
            txn.Doom(new TransactionAbortedException(txn.Tid, AbortReason.PrepareFailed, $"its prepare could not be logged: {exception.Message}", exception));
            if (txn.Phase == Actors.ActorTxnPhase.Prepared)
            {
                End(txn, TxnOutcome.Aborted);
            }

            return new PrepareResult(PrepareVote.No);
        }

        // Aborted while the record was written (the first actor gave up): the record is harmless without a commit.
        return txn.Phase == Actors.ActorTxnPhase.Prepared ? vote : new PrepareResult(PrepareVote.No);
    }

    /// <summary>
    /// This actor's part of the ACT's AfterSet: the first batch after it here (-1 if none), and whether the part is
    /// complete for the check. The delivered watermark is read before the schedule: every batch up to it is then
    /// in the schedule already, so if it covers max(BS), batches after the ACT still to come are larger than max(BS).
    /// In-order delivery inside the silo makes this exact where the thesis, with asynchronous batch messages, had
    /// to treat the part as unknown (its incomplete-AfterSet case).
    /// </summary>
    private (long MinAfterBid, bool Complete) AfterSetPart(Actors.ActorTransaction<TState> txn)
    {
        var delivered = _runtime.Pacts.DeliveredBid;
        var minAfterBid = _schedule.MinAfterBid(txn.Tid);
        return (minAfterBid, minAfterBid >= 0 || delivered >= txn.MaxBeforeBid);
    }

    /// <summary>
    /// The hybrid serializability check (thesis §3.3.4.3) and commit rule (§3.3.4.4), once every participant voted.
    /// max(BS) is the largest batch the ACT depends on (collected with its calls); min(AS) the smallest batch that
    /// waits for it (collected with the votes, so it is as complete as it can be). The ACT passes if max(BS) &lt;
    /// min(AS). If an actor's part of the AfterSet is incomplete (see <see cref="AfterSetPart"/>), it passes only if
    /// batch max(BS) already committed (the thesis's optimization). It then commits only after batch max(BS)
    /// committed, and aborts if that batch aborted (it read its writes). Waiting is safe after the check: every
    /// batch waiting for this ACT has a larger bid than the one it waits for, and nobody waits for its locks
    /// meanwhile (<see cref="WaitDieLock.HolderWaitsForBatches"/>), so no cycle of waits closes through it.
    /// </summary>
    private async Task<TransactionAbortedException?> CheckHybridAsync(Actors.ActorTransaction<TState> txn, PrepareResult[] votes)
    {
        var maxBefore = txn.MaxBeforeBid;
        if (!CheckingHybrid || maxBefore < 0 || _runtime.Options.UnsafeSkipHybridGate)
        {
            return null; // depends on no uncommitted batch (or, test-only, the check is off)
        }

        var (minAfter, complete) = AfterSetPart(txn);
        foreach (var vote in votes)
        {
            complete &= vote.AfterSetComplete;
            if (vote.MinAfterBid >= 0 && (minAfter < 0 || vote.MinAfterBid < minAfter))
            {
                minAfter = vote.MinAfterBid;
            }
        }

        if (complete && minAfter >= 0 && maxBefore >= minAfter)
        {
            return new TransactionAbortedException(txn.Tid, AbortReason.Serializability,
                $"it depends on PACT batch {maxBefore}, and batch {minAfter} depends on it.");
        }

        if (!complete && !_runtime.Pacts.IsCommitted(maxBefore))
        {
            return new TransactionAbortedException(txn.Tid, AbortReason.SerializabilityIncompleteAfterSet,
                $"it depends on PACT batch {maxBefore}, which has not committed, and not every actor it used has a batch scheduled after it yet.");
        }

        if (!_runtime.Pacts.IsCommitted(maxBefore))
        {
            // Whoever waits for this ACT's locks would now wait for batches that may wait for it: they give way.
            _lock.HolderWaitsForBatches(txn.Tid);
        }

        bool committed;
        try
        {
            committed = await _runtime.Pacts.WhenResolvedAsync(maxBefore).WaitAsync(_runtime.Options.ExecutionTimeout);
        }
        catch (TimeoutException)
        {
            return new TransactionAbortedException(txn.Tid, AbortReason.HybridDeadlock,
                $"PACT batch {maxBefore}, which it depends on, did not commit within {_runtime.Options.ExecutionTimeout}.");
        }

        if (!committed)
        {
            return new TransactionAbortedException(txn.Tid, AbortReason.CascadingAbort, $"PACT batch {maxBefore}, which it depends on, aborted.");
        }

        // Every batch up to max(BS) is resolved now; the ones below it that it read must have committed too.
        return _runtime.Pacts.AnyAbortedBetween(txn.MinBeforeBid, maxBefore)
            ? new TransactionAbortedException(txn.Tid, AbortReason.CascadingAbort,
                $"a PACT batch it depends on (between {txn.MinBeforeBid} and {maxBefore}) aborted.")
            : null;
    }

    private async Task AbortEverywhereAsync(Actors.ActorTransaction<TState> txn, TransactionAbortedException reason)
    {
        txn.Doom(reason);
        End(txn, TxnOutcome.Aborted);
        txn.Participants.Remove(_self);
        await AbortParticipantsAsync(txn.Tid, txn.Participants);
    }

    private async Task AbortParticipantsAsync(long tid, IEnumerable<GrainId> participants)
    {
        var others = participants.Where(p => p != _self).ToArray();
        if (others.Length == 0)
        {
            return;
        }

        try
        {
            await Task.WhenAll(others.Select(p => _runtime.Participant(p).Abort(tid))).WaitAsync(_runtime.Options.PrepareTimeout);
        }
        catch (Exception exception)
        {
            // Presumed abort: a participant that missed this aborts on its own after ParticipantTimeout.
            _logger.LogWarning(exception, "Abort of transaction {Tid} not acknowledged by every participant", tid);
        }
    }

    Task<PrepareResult> IActParticipant.Prepare(long tid, long maxBeforeBid)
    {
        if (!_transactions.TryGetValue(tid, out var txn) || txn.Phase != Actors.ActorTxnPhase.Active)
        {
            return Task.FromResult(new PrepareResult(PrepareVote.No));
        }

        if (txn.Doomed is not null || txn.RunningMethods > 0 || txn.OutstandingCalls > 0)
        {
            // Still running here although its first method returned: a call was not awaited somewhere.
            txn.Doom(txn.Doomed ?? new TransactionAbortedException(tid, AbortReason.UnawaitedCall, "a method was still running at prepare."));
            End(txn, TxnOutcome.Aborted);
            return Task.FromResult(new PrepareResult(PrepareVote.No));
        }

        txn.MaxBeforeBid = Math.Max(txn.MaxBeforeBid, maxBeforeBid);
        var (minAfterBid, complete) = CheckingHybrid ? AfterSetPart(txn) : (-1, false);
        if (CheckingHybrid && txn.Wrote && !_runtime.Pacts.IsCommitted(txn.MaxBeforeBid))
        {
            // The first actor may wait for batch max(BS) with this lock held (see CheckHybridAsync).
            _lock.HolderWaitsForBatches(tid);
        }

        if (!txn.Wrote)
        {
            End(txn, TxnOutcome.Committed);
            return Task.FromResult(new PrepareResult(PrepareVote.ReadOnly, minAfterBid, complete));
        }

        txn.Phase = Actors.ActorTxnPhase.Prepared;
        txn.Touch();
        var prepared = new PrepareResult(PrepareVote.Prepared, minAfterBid, complete);
        if (!_runtime.Log.Enabled)
        {
            return Task.FromResult(prepared);
        }

        // With one ordered logger the vote carries the new state and the first actor logs it with the decision (see
        // LogCommit); with several, the participant makes it durable on its own logger before voting.
        var state = _runtime.Serialize(txn.Working!);
        var seq = _state.NextSeq();
        return _runtime.Log.StatesDurableBeforeVote
            ? LogPreparedAsync(txn, prepared, Logging.LogRecord.StateWritten(Logging.LoggedTxnKind.Act, tid, _self, seq, state))
            : Task.FromResult(prepared with { State = state, Seq = seq });
    }

    Task IActParticipant.Commit(long tid, long maxBeforeBid)
    {
        if (_transactions.TryGetValue(tid, out var txn) && txn.Phase == Actors.ActorTxnPhase.Prepared)
        {
            txn.MaxBeforeBid = Math.Max(txn.MaxBeforeBid, maxBeforeBid);
            End(txn, TxnOutcome.Committed);
        }

        return Task.CompletedTask;
    }

    Task IActParticipant.Abort(long tid)
    {
        if (_transactions.TryGetValue(tid, out var txn) && !txn.IsRoot)
        {
            txn.Doom(new TransactionAbortedException(tid, AbortReason.PrepareFailed, "aborted by its first actor."));
            End(txn, TxnOutcome.Aborted);
        }

        return Task.CompletedTask;
    }

    Task<TxnOutcome> IActParticipant.Resolve(long tid)
    {
        if (_transactions.TryGetValue(tid, out var txn) && txn.CommitLogging is not null)
        {
            // Decided, and the commit record queued: the participant may install its state now, as the commit
            // message would let it (early lock release, see CommitAsync's decision).
            return Task.FromResult(TxnOutcome.Committed);
        }

        if (_transactions.TryGetValue(tid, out txn))
        {
            // Undecided: deciding "abort" now is always safe, and the first actor will act on it.
            txn.Doom(new TransactionAbortedException(tid, AbortReason.ParticipantTimeout, "a participant timed out waiting for the decision."));
            return Task.FromResult(TxnOutcome.Aborted);
        }

        return Task.FromResult(_ended.TryGet(tid, out var outcome) ? outcome : TxnOutcome.Aborted);
    }

    private Actors.ActorTransaction<TState> Begin(TxnContext context, bool isRoot)
    {
        var txn = new Actors.ActorTransaction<TState>(context, isRoot);
        _transactions.Add(context.Tid, txn);
        return txn;
    }

    private Actors.ActorTransaction<TState> RequireActive(TxnContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        if (!_transactions.TryGetValue(context.Tid, out var txn))
        {
            throw new TransactionNotActiveException(context.Tid, _ended.TryGet(context.Tid, out var outcome)
                ? $"it already ended on this actor ({outcome})."
                : "it already ended, or its context reached this actor other than through StartTxn or CallActor.");
        }

        if (txn.Phase != Actors.ActorTxnPhase.Active)
        {
            throw (SnapperException?)txn.Doomed ?? new TransactionNotActiveException(context.Tid, $"it is {txn.Phase} and can no longer run methods.");
        }

        return txn;
    }

    /// <summary>Ends the transaction here: installs its copy if it committed a write, releases its lock, remembers the outcome.</summary>
    private void End(Actors.ActorTransaction<TState> txn, TxnOutcome outcome)
    {
        if (outcome == TxnOutcome.Committed && txn.Wrote && txn.Working is not null)
        {
            _state.InstallAct(txn.Working);
        }

        txn.Phase = Actors.ActorTxnPhase.Ended;
        _transactions.Remove(txn.Tid);
        _lock.Release(txn.Tid, txn.Doomed);
        if (txn.Admitted)
        {
            txn.Admitted = false;
            _schedule.ExitAct(txn.Tid, outcome == TxnOutcome.Committed ? txn.MaxBeforeBid : -1);
        }
    }

    private void RememberOutcome(long tid, TxnOutcome outcome)
    {
        _ended.Record(tid, outcome);
        EnsureWatchdog();
    }

    /// <summary>Starts the timer that bounds how long participants wait and prunes remembered outcomes, while there are any.</summary>
    private void EnsureWatchdog()
    {
        if (_watchdog is not null)
        {
            return;
        }

        var options = _runtime.Options;
        var period = TimeSpan.FromTicks(Math.Min(options.ParticipantTimeout.Ticks, options.DecisionTimeout.Ticks) / 4);
        _watchdog = this.RegisterGrainTimer(WatchParticipantsAsync, new GrainTimerCreationOptions(period, period) { Interleave = true });
    }

    private Task WatchParticipantsAsync()
    {
        var options = _runtime.Options;
        var now = Environment.TickCount64;
        var participants = 0;
        foreach (var txn in _transactions.Values.Where(t => !t.IsRoot).ToArray())
        {
            participants++;
            var idle = TimeSpan.FromMilliseconds(now - txn.LastActivity);
            if (txn.Phase == Actors.ActorTxnPhase.Active && txn.RunningMethods == 0 && idle > options.ParticipantTimeout)
            {
                _logger.LogWarning("Transaction {Tid} idle for {Idle} without a decision; aborting it here", txn.Tid, idle);
                txn.Doom(new TransactionAbortedException(txn.Tid, AbortReason.ParticipantTimeout, $"no prepare within {options.ParticipantTimeout}."));
                End(txn, TxnOutcome.Aborted);
                RememberOutcome(txn.Tid, TxnOutcome.Aborted);
            }
            else if (txn.Phase == Actors.ActorTxnPhase.Prepared && idle > options.DecisionTimeout)
            {
                txn.Touch();
                _ = ResolvePreparedAsync(txn);
            }
        }

        _ended.Prune(options.OutcomeRetention);
        if (participants == 0 && _ended.Count == 0)
        {
            _watchdog?.Dispose();
            _watchdog = null;
        }

        return Task.CompletedTask;
    }

    private async Task ResolvePreparedAsync(Actors.ActorTransaction<TState> txn)
    {
        try
        {
            var outcome = await _runtime.Participant(txn.Context.Root).Resolve(txn.Tid);
            if (txn.Phase == Actors.ActorTxnPhase.Prepared)
            {
                End(txn, outcome);
            }
        }
        catch (Exception exception)
        {
            _logger.LogWarning(exception, "Could not resolve prepared transaction {Tid}; will ask again", txn.Tid);
        }
    }
}
