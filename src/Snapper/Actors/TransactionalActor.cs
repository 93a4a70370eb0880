using System.Runtime.CompilerServices;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Orleans.Concurrency;
using Snapper.Act;
using Snapper.Actors;

namespace Snapper;

/// <summary>
/// Base class of a transactional actor (thesis §3.2.2.2). Derive from it, implement your interface that
/// derives from <see cref="ITransactionalActor"/>, read and write the state only through
/// <see cref="GetState"/>, and call other actors only through <c>CallActor</c>.
/// Clients start transactions with <c>actor.StartTxn(actor.Method, input)</c>.
/// </summary>
/// <typeparam name="TState">
/// The actor's state: a class Orleans can copy (mark it <c>[GenerateSerializer]</c>). <see cref="GetState"/> with
/// <see cref="AccessMode.ReadWrite"/> returns the transaction's own copy; change it in place, and it replaces the
/// committed state only if the transaction commits. With <see cref="AccessMode.Read"/> it returns the committed state
/// itself, shared and not copied: do not change it.
/// </typeparam>
/// <remarks>
/// The grain is reentrant: methods of different transactions interleave at awaits, and concurrency control decides
/// who may touch the state. This class is the user-facing surface only; the protocols live elsewhere and keep their
/// state in the actor's silo-level core (<see cref="Actors.ActorCore{TState}"/>), so that an activation ending for
/// any reason loses neither committed state nor work in flight: ACTs in <see cref="ActParticipant{TState}"/> and
/// <see cref="ActCoordinator{TState}"/>, PACTs in <c>TransactionalActor.Pact.cs</c> and the PACT service, the
/// schedule in <see cref="Scheduling.ActorSchedule"/>.
/// </remarks>
[Reentrant]
[Cluster.TransactionalActorPlacement]
public abstract partial class TransactionalActor<TState> : Grain, ITransactionalActor, Actors.IActorCallee, IActParticipant, IGrainMigrationParticipant,
    Migration.IMigratingActor, Act.IWatchedActivation, Actors.ILocalCallee
    where TState : class, new()
{
    private const string MigratedStateKey = "snapper.committed-state";
    private Actors.SnapperRuntime _runtime = null!;
    private Actors.TransactionalMethodTable _methods = null!;
    private Actors.ActorCore<TState> _core = null!;
    private (TState State, long Seq)? _rehydrated;
    private Task<TState>? _lastPactState;
    private GrainId _self;

    /// <summary>
    /// Joins the activation's life cycle, so that when the activation ends (deactivated, collected, migrated, or failed
    /// after it started), and whether or not a subclass's <see cref="Grain.OnDeactivateAsync"/> calls its base, it gives
    /// up the actor's core in one of its last turns, after the local calls still running on it (<c>TransactionalActor.LocalCalls.cs</c>).
    /// </summary>
    /// <remarks>
    /// The step is at the last stage, whose stop runs first: a slow stop of another observer cannot keep it from running
    /// before Orleans stops waiting for the deactivation. A core is adopted only after every stage started, so the step's
    /// stop always runs for an activation that adopted one.
    /// </remarks>
    protected TransactionalActor()
    {
        GrainContext.ObservableLifecycle.Subscribe<TransactionalActor<TState>>(GrainLifecycleStage.Last, static _ => Task.CompletedTask, async cancellation =>
        {
            await StopLocalCallsAsync(cancellation);
            _core?.Release(this);
        });
    }

    /// <summary>
    /// The committed state as of now, outside any transaction. For inspection only; it is not locked, and a later PACT
    /// batch may change the same object in place, so read what you need from it at once rather than keeping it.
    /// </summary>
    protected TState CommittedState => _core.State.Committed;

    private Scheduling.ActorSchedule Schedule => _core.Schedule;

    private ActParticipant<TState> Participant => _core.Participant;

    /// <inheritdoc />
    public override async Task OnActivateAsync(CancellationToken cancellationToken)
    {
        _runtime = ServiceProvider.GetService<Actors.SnapperRuntime>()
            ?? throw new SnapperException("Snapper is not configured in this silo: call siloBuilder.AddSnapper().");
        _methods = _runtime.Methods.For(GetType());
        _self = this.GetGrainId();

        // An activation placed by a silo whose copy of the placement directory is older than this one's (it was down
        // during a migration): the actor lives on another worker, and must never be active on two. A worker that just
        // started checks its own copy against the master's first.
        if (_runtime.Placement.Clustered)
        {
            await _runtime.Directory.WhenReadAsync(_runtime.Options.ExecutionTimeout).WaitAsync(cancellationToken);
        }

        if (!_runtime.ServesHere(_self))
        {
            throw new ActorMigratingException(_self.ToString());
        }

        // After a restart, the recovered state may depend on a transaction decided on another silo: the core is made
        // only once that silo answered (Cluster.InDoubtResolver), and never from a state that may still change.
        if (_rehydrated is null && !_runtime.Actors.Contains(_self) && _runtime.Log.Enabled && _runtime.Log.IsInDoubt(_self))
        {
            try
            {
                await _runtime.Log.WhenSettledAsync(_self).WaitAsync(_runtime.Options.ExecutionTimeout, cancellationToken);
            }
            catch (TimeoutException)
            {
                throw new ActorRecoveringException(_self.ToString(), $"its state depends on a transaction decided on another silo, which has not answered within {_runtime.Options.ExecutionTimeout}; retry later.");
            }
        }

        // Orleans gives up on an activation cancelled while this method waited above: its deactivation ran meanwhile, and
        // its life cycle's stop step found no core to hand back, so it must not take one now. Nothing below awaits before
        // the core is adopted, so no cancellation comes between this check and the adoption.
        cancellationToken.ThrowIfCancellationRequested();

        // The first activation of this actor in the silo creates its core from what it brought along (migration),
        // what recovery read from the log, or a fresh state; every later one continues with the same core. Orleans
        // keeps one activation of the actor at a time, so the factory never runs twice for it.
        _core = _runtime.Actors.GetOrAdd(_self, CreateCore);
        _rehydrated = null;
        _core.Adopt(this);
        await base.OnActivateAsync(cancellationToken);
    }

    private Actors.ActorCore<TState> CreateCore()
    {
        var logger = _runtime.LoggerFor(GetType());
        // Handed over by a live migration: the state this worker logged when it accepted it, restored as recovery would
        // restore it (a key-value state then knows its base is in this log). Orleans' migration brings the same state
        // along when the old activation was still there; the accepted one is preferred, being the logged one.
        if (_runtime.Inbox.TryTake(_self, out var arrived))
        {
            var image = arrived.Incremental ? Logging.KeyedEntries.Apply(null, [arrived.LogPayload]) : arrived.LogPayload;
            return new Actors.ActorCore<TState>(_self, _runtime, logger, RestoreState(new Logging.RecoveredActor(image, arrived.Seq, arrived.Seq, arrived.Incremental)),
                arrived.Seq, KeyLevelConcurrency);
        }

        if (_rehydrated is { } moved)
        {
            return new Actors.ActorCore<TState>(_self, _runtime, logger, moved.State, moved.Seq, KeyLevelConcurrency);
        }

        var recovered = _runtime.Log.Enabled ? _runtime.Log.Recovered(_self) : null;
        var initial = recovered?.State is not null ? RestoreState(recovered) : CreateInitialState();
        return new Actors.ActorCore<TState>(_self, _runtime, logger, initial, recovered?.MaxSeq ?? 0, KeyLevelConcurrency);
    }

    /// <summary>Whether a subclass in this library versions its state key by key (its state implements <see cref="Scheduling.IKeyedVersion"/>).</summary>
    private protected virtual bool KeyLevelConcurrency => false;

    /// <summary>
    /// For a PACT on an actor versioned key by key: waits until the PACT may use <paramref name="keys"/> (declared, and
    /// at the head of their queues) and returns its own version with them; null if the PACT uses the actor whole
    /// (declared without keys, or its batch runs here alone), after checking that the keys are declared.
    /// </summary>
    /// <exception cref="TransactionAbortedException">A key is not declared (<see cref="AbortReason.UndeclaredAccess"/>), or the PACT was aborted meanwhile.</exception>
    private protected async Task<TState?> KeyedPactStateAsync(TxnContext context, IReadOnlyCollection<object> keys)
    {
        try
        {
            if (!await Schedule.EnterKeysAsync(context.Tid, keys))
            {
                return null;
            }
        }
        catch (TransactionAbortedException abort)
        {
            _runtime.Ordering.Doom(abort);
            throw;
        }
        catch (TransactionNotActiveException)
        {
            throw PactNotRunning(context);
        }

        lock (Schedule.Gate)
        {
            if (Schedule.IsRunning(context.Tid) && Schedule.Records(_core.State))
            {
                return _core.State.ForKeyedPact(context.Tid, keys);
            }
        }

        RequireCurrentCore();
        throw PactNotRunning(context);
    }

    /// <summary>
    /// Why a PACT's access to this actor's state finds it no longer running here (not under the schedule's gate: the PACT
    /// service calls into schedules with its own lock held). The master's abort of a global batch may drop its part on this
    /// worker while a method of it runs here, before the abort reaches the worker of its first actor, which would then
    /// report this refusal as the PACT's own failure: it is named as the cascading abort it is, not as a call made outside
    /// the transaction (<see cref="AbortReason.InvalidCall"/>, which blames the PACT's code).
    /// </summary>
    private Exception PactNotRunning(TxnContext context) =>
        (Exception?)_runtime.Ordering.DroppedHere(context)
        ?? new TransactionNotActiveException(context.Tid, "it is not running a method on this actor (it ended, or the context was kept).");

    /// <summary>The state recovery found for this actor in the log (a subclass in this library may log it in its own form).</summary>
    private protected virtual TState RestoreState(Logging.RecoveredActor recovered) => _runtime.Deserialize<TState>(recovered.State!);

    /// <summary>
    /// The object a subclass in this library keeps for the transaction of <paramref name="context"/> on this actor: made by
    /// <paramref name="create"/> the first time (null: only look), the same afterwards; an ACT's ends with it, a PACT's is
    /// replaced by the next PACT's. Call after <see cref="GetState"/> admitted the transaction.
    /// </summary>
    private protected T? TransactionScoped<T>(TxnContext context, Func<T>? create)
        where T : class
    {
        if (context.Mode == TxnMode.Pact)
        {
            return _core.PactScoped(context.Tid, create);
        }

        var txn = Participant.RequireActive(context);
        return (T?)(txn.Scoped ??= create?.Invoke());
    }

    /// <summary>The state of an actor that no transaction has written yet. Default: <c>new TState()</c>.</summary>
    protected virtual TState CreateInitialState() => new();

    /// <summary>
    /// Gives the transaction access to this actor's state (thesis Fig. 3.1). An ACT waits for the lock as S2PL with
    /// wait-die requires; a PACT already has its turn. <see cref="AccessMode.ReadWrite"/> returns the transaction's own
    /// copy, the same object on every call of the transaction here. <see cref="AccessMode.Read"/> returns the state
    /// as committed (or as the earlier PACTs of its batch left it), shared and not copied, so that reading costs
    /// nothing and a read-only access is never logged: it must not be changed (what it would do is undefined).
    /// After a ReadWrite access, Read returns the transaction's copy too.
    /// </summary>
    /// <exception cref="TransactionAbortedException">The transaction must abort (wait-die, lock timeout, or it was aborted meanwhile).</exception>
    /// <exception cref="TransactionNotActiveException">The context's transaction is not running on this actor.</exception>
    protected Task<TState> GetState(TxnContext context, AccessMode mode) => GetStateCore(context, mode, keysChecked: false);

    /// <summary>
    /// <see cref="GetState"/>; <paramref name="keysChecked"/>: a PACT that declared keys here uses only keys it declared
    /// (a key-value actor checked them), else such a PACT is refused the whole state. An ACT on a key-level actor takes
    /// the whole state for writing even to read it: ACTs holding single keys hold the actor's lock for reading.
    /// </summary>
    private protected Task<TState> GetStateCore(TxnContext context, AccessMode mode, bool keysChecked)
    {
        ArgumentNullException.ThrowIfNull(context);
        if (context.Mode != TxnMode.Pact)
        {
            return ActStateAsync(context, mode);
        }

        // A PACT's state is handed out at once (no lock to wait for), so without an async method: this runs for every
        // access of every PACT. Failures still reach the caller as a faulted task, as from the ACT path.
        try
        {
            return PactStateTask(PactState(context, mode, keysChecked));
        }
        catch (Exception exception)
        {
            return Task.FromException<TState>(exception);
        }
    }

    /// <summary>
    /// A completed task of <paramref name="state"/>: the one handed out last if it holds the same object. PACTs of later
    /// batches work on the same object in place (a batch keeps a copy aside for rollback instead), so most accesses
    /// reuse one task instead of allocating their own. A completed task never changes, and two turns racing here can
    /// only each store a task of the object they hand out. After an ACT installs a new state object, the task keeps the
    /// old one alive until the actor's next PACT access: one state object per actor at most.
    /// </summary>
    private Task<TState> PactStateTask(TState state)
    {
        var last = _lastPactState;
        if (last is null || !ReferenceEquals(last.Result, state))
        {
            _lastPactState = last = Task.FromResult(state);
        }

        return last;
    }

    private TState PactState(TxnContext context, AccessMode mode, bool keysChecked)
    {
        // A PACT's turn was granted when its call entered the schedule; the mode needs no lock. The check
        // and the hand-out are one step under the schedule's lock: a cascading abort between them would
        // otherwise give an aborted PACT the fresh copy the next batch is about to work on.
        if (!keysChecked)
        {
            try
            {
                Schedule.RequireDeclaredWhole(context.Tid);
            }
            catch (TransactionAbortedException abort)
            {
                _runtime.Ordering.Doom(abort); // not under the gate: the PACT service calls into schedules with its own lock held
                throw;
            }
        }

        lock (Schedule.Gate)
        {
            if (Schedule.IsRunning(context.Tid) && Schedule.Records(_core.State))
            {
                return _core.State.ForPact(mode);
            }
        }

        RequireCurrentCore();
        throw PactNotRunning(context);
    }

    /// <summary>
    /// Refuses a transaction's access to the state unless this activation's core is the one the actor's schedule records
    /// and logs (the silo's current one). Orleans keeps one activation of an actor per silo, and a core outlives its
    /// activations, but a core is replaced when the actor's state arrives anew (a migration back to this silo) or leaves:
    /// an activation still holding the old one, reached nonetheless, would write where no version is kept or logged, and
    /// its transaction would commit without its write. It is refused as a moving actor (the caller submits again) and
    /// takes no more local calls.
    /// </summary>
    private void RequireCurrentCore()
    {
        if (!Schedule.Records(_core.State))
        {
            RefuseAsLeftBehind();
        }
    }

    private void RefuseAsLeftBehind()
    {
        _core.Logger.LogError("Actor {Actor}: an activation whose state was taken over by a newer core in this silo was reached by a transaction; refused", _self);
        _runtime.Actors.StopLocalCalls(_self, this);
        DeactivateOnIdle();
        throw new ActorMigratingException(_self.ToString());
    }

    private async Task<TState> ActStateAsync(TxnContext context, AccessMode mode)
    {
        RequireCurrentCore();
        var txn = Participant.RequireActive(context);
        var unlocked = mode == AccessMode.Read && _runtime.TestHooks.SkipReadLocks && !KeyLevelConcurrency;
        var lockMode = KeyLevelConcurrency ? AccessMode.ReadWrite : mode;
        if (!unlocked && !_core.Lock.Holds(txn.Tid, lockMode))
        {
            await LockAsync(txn, lockMode, static (actor, txn, mode) => actor._core.Lock.AcquireAsync(txn.Tid, mode, actor._runtime.Options.LockWaitTimeout));
        }

        if (KeyLevelConcurrency && !txn.HoldsWhole)
        {
            // It may have used single keys before: its copy becomes the whole latest state with its own changes.
            txn.HoldsWhole = true;
            txn.Working = txn.Working is { } keyed ? _core.State.Refreshed(keyed) : null;
        }

        txn.Touch();
        if (mode == AccessMode.ReadWrite)
        {
            txn.Wrote = true;
            return txn.Working ??= _core.State.ForAct();
        }

        return txn.Working ?? _core.State.ForActRead();
    }

    /// <summary>
    /// For an ACT on a key-level actor: locks <paramref name="keys"/> (and the actor for reading), and returns the ACT's
    /// copy with them taken from the latest state; null if it uses the actor whole (it holds it whole already, or the
    /// actor cannot be used by key now, see <see cref="Scheduling.StateVersions{TState}.KeyedActsAllowed"/>).
    /// </summary>
    /// <exception cref="TransactionAbortedException">Wait-die, a lock timeout, the hybrid bound, or it was aborted meanwhile.</exception>
    /// <exception cref="TransactionNotActiveException">The context's transaction is not running on this actor.</exception>
    private protected async Task<TState?> KeyedActStateAsync(TxnContext context, IReadOnlyDictionary<object, AccessMode> keys)
    {
        RequireCurrentCore();
        var txn = Participant.RequireActive(context);
        if (!KeyLevelConcurrency || txn.HoldsWhole || !_core.State.KeyedActsAllowed)
        {
            return null;
        }

        await LockAsync(txn, keys, static (actor, txn, keys) => actor.AcquireKeysAsync(txn, keys));
        txn.Touch();
        if (keys.Values.Contains(AccessMode.ReadWrite))
        {
            txn.Wrote = true;
        }

        txn.Working = _core.State.ForKeyedAct(txn.Working, [.. keys.Keys.Where(txn.TakenKeys.Add)]);
        return txn.Working;
    }

    /// <summary>A key-level ACT's locks: the actor's for reading, then each key's in <paramref name="keys"/>.</summary>
    private async Task AcquireKeysAsync(Actors.ActorTransaction<TState> txn, IReadOnlyDictionary<object, AccessMode> keys)
    {
        if (!_core.Lock.Holds(txn.Tid, AccessMode.Read))
        {
            await _core.Lock.AcquireAsync(txn.Tid, AccessMode.Read, _runtime.Options.LockWaitTimeout);
        }

        foreach (var (key, mode) in keys)
        {
            var keyLock = _core.KeyLocks.Of(key);
            if (!keyLock.Holds(txn.Tid, mode))
            {
                if (txn.Phase != Actors.ActorTxnPhase.Active)
                {
                    // Ended between the grant of the previous key and this continuation: its end released what it had
                    // asked for, and a lock asked for now would have nobody to release it.
                    throw (SnapperException?)txn.Doomed ?? new TransactionNotActiveException(txn.Tid, "it ended while it took its key locks.");
                }

                txn.LockedKeys.Add(key); // before the wait: ending the transaction withdraws the request too
                await keyLock.AcquireAsync(txn.Tid, mode, _runtime.Options.LockWaitTimeout);
            }
        }
    }

    /// <summary>
    /// Lets the ACT in past the PACT batches placed before it here (once), then takes its locks with
    /// <paramref name="acquire"/>, then records what the hybrid check needs of this actor.
    /// </summary>
    /// <remarks><paramref name="acquire"/> is static, with what it needs passed in: every ACT access comes through here, and a closure would cost two objects each time.</remarks>
    private async Task LockAsync<TArg>(Actors.ActorTransaction<TState> txn, TArg arg, Func<TransactionalActor<TState>, Actors.ActorTransaction<TState>, TArg, Task> acquire)
    {
        try
        {
            if (!txn.Admitted)
            {
                await Schedule.EnterActAsync(txn.Tid, HybridWaitFor(txn));
                if (txn.Phase != Actors.ActorTxnPhase.Active)
                {
                    // Ended while it waited: End did not know it was let in, so leave here, or batches would wait forever.
                    Schedule.ExitAct(txn.Tid, Hybrid.BatchPosition.None);
                    throw (SnapperException?)txn.Doomed ?? new TransactionNotActiveException(txn.Tid, "it ended while waiting for PACT batches.");
                }

                txn.Admitted = true;
            }

            await acquire(this, txn, arg);
            if (CheckingHybrid)
            {
                // After the lock: every ACT that conflicts with this one and came first has ended here by now.
                var (maxBefore, readFrom) = Schedule.Before(txn.Tid);
                txn.DependsOn(maxBefore);
                txn.ReadFromBid = readFrom;
                txn.ReadUncommitted |= readFrom >= 0;
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
        var holdsNothing = txn.IsRoot && txn.ParticipantCount == 0 && txn.OutstandingCalls == 0;
        return holdsNothing ? _runtime.Options.HybridWaitTimeout : TimeSpan.Zero;
    }

    /// <summary>
    /// Calls a transactional method of another actor (or of this one) inside the transaction (thesis Fig. 3.1).
    /// Name the method by its method group on the actor reference, as in <c>CallActor(ctx, account.Deposit, 10m)</c>.
    /// Calls may run in parallel (<c>Task.WhenAll</c>), but each must be awaited before the method returns: a call
    /// still running when the method that made it returns aborts the transaction (<see cref="AbortReason.UnawaitedCall"/>).
    /// </summary>
    /// <exception cref="TransactionAbortedException">The call failed; the whole transaction will abort, even if this is caught.</exception>
    // A method returning Task<T> also converts to the Task overload, which C# would otherwise prefer.
    [OverloadResolutionPriority(1)]
    // Not an async method: the call's own state machine (CallPactAsync, CallActAsync) returns the typed result, so a
    // call pays for one, not two.
    protected Task<TResult> CallActor<TInput, TResult>(TxnContext context, Func<TxnContext, TInput, Task<TResult>> method, TInput input)
    {
        var actor = TransactionalMethod.TargetOf(method);
        return CallCore<TResult>(context, actor.GetGrainId(), TransactionalMethod.NameOf(actor, method), input);
    }

    /// <summary>Calls a transactional method that returns no result; see <see cref="CallActor{TInput, TResult}"/>.</summary>
    protected Task CallActor<TInput>(TxnContext context, Func<TxnContext, TInput, Task> method, TInput input)
    {
        var actor = TransactionalMethod.TargetOf(method);
        return CallCore<object?>(context, actor.GetGrainId(), TransactionalMethod.NameOf(actor, method), input);
    }

    /// <summary>Calls one of Snapper's internal methods (<see cref="InternalMethods"/>) of <paramref name="actor"/> inside the transaction.</summary>
    private protected Task<object?> CallInternal(TxnContext context, GrainId actor, string method, object? input) =>
        CallCore<object?>(context, actor, method, input, isInternal: true);

    /// <summary>
    /// Methods a subclass in this library serves to Snapper only (called with <see cref="CallInternal"/>, never by name from
    /// user code or a client); null if none.
    /// </summary>
    private protected virtual Actors.TransactionalMethodTable? InternalMethods => null;

    /// <summary>
    /// Runs when a transactional method (user or internal) of this actor returned, inside the transaction and before
    /// its caller hears the result: a key-value actor forwards its changes to dependent keys here.
    /// </summary>
    private protected virtual Task AfterMethodAsync(TxnContext context) => Task.CompletedTask;

    /// <summary>Whether <see cref="AfterMethodAsync"/> does anything; if not, a method still running is awaited by its caller alone.</summary>
    private protected virtual bool HasAfterMethod => false;

    /// <summary>
    /// Runs a method, then <see cref="AfterMethodAsync"/>. Not async while both finish at once (a callee's method, as a
    /// rule): no state machine and no task per call then. A method that throws before returning its task fails the
    /// returned task, as an async method would, so callers classify every failure in one place.
    /// </summary>
    private ValueTask<object?> InvokeAsync(Actors.TransactionalMethodInvoker method, TxnContext context, object? input)
    {
        try
        {
            var run = method.Invoke(this, context, input);
            if (!run.IsCompletedSuccessfully)
            {
                return HasAfterMethod ? AfterRunAsync(run, context) : run;
            }

            var result = run.Result;
            var after = AfterMethodAsync(context);
            return after.IsCompletedSuccessfully ? new(result) : AfterMethodThenAsync(after, result);
        }
        catch (Exception exception)
        {
            return ValueTask.FromException<object?>(exception);
        }
    }

    private async ValueTask<object?> AfterRunAsync(ValueTask<object?> run, TxnContext context)
    {
        var result = await run;
        await AfterMethodAsync(context);
        return result;
    }

    private static async ValueTask<object?> AfterMethodThenAsync(Task after, object? result)
    {
        await after;
        return result;
    }

    private Actors.TransactionalMethodInvoker ResolveCall(CallRequest request) => request.Internal
        ? (InternalMethods ?? throw new TransactionalMethodNotFoundException(GetType().FullName ?? GetType().Name, request.Method)).Resolve(request.Method, request.Input)
        : _methods.Resolve(request.Method, request.Input);

    /// <remarks>
    /// Not async itself: a PACT arriving while the log has room goes straight to <see cref="RunPactAsync"/>, one state
    /// machine less per transaction. Every failure still reaches the caller as a failed task.
    /// </remarks>
    Task<TxnResponse> ITransactionalActor.StartTxn(TxnRequest request)
    {
        try
        {
            TakeLocalCallsOnce();
            var method = _methods.Resolve(request.Method, request.Input);
            RefuseWhileMigrating();

            // Backpressure from the log: a new transaction starts only when the loggers have room (see LogQueueCapacity).
            var room = _runtime.Log.WhenRoomAsync();
            if (room.IsCompletedSuccessfully && request.AccessInfo is { } accessInfo)
            {
                ValidateAccessInfo(request.Method, accessInfo);
                return RunPactAsync(method, _runtime.CopyValue(request.Input), accessInfo);
            }

            return StartWhenRoomAsync(request, method, room);
        }
        catch (Exception exception)
        {
            return Task.FromException<TxnResponse>(exception);
        }
    }

    private async Task<TxnResponse> StartWhenRoomAsync(TxnRequest request, Actors.TransactionalMethodInvoker method, Task room)
    {
        try
        {
            await room.WaitAsync(_runtime.Options.ExecutionTimeout);
        }
        catch (TimeoutException)
        {
            throw new TransactionAbortedException(0, AbortReason.ExecutionTimeout,
                $"the write-ahead log's queue stayed full for {_runtime.Options.ExecutionTimeout}; nothing of it ran.");
        }
        if (request.AccessInfo is { } accessInfo)
        {
            ValidateAccessInfo(request.Method, accessInfo);
            return await RunPactAsync(method, _runtime.CopyValue(request.Input), accessInfo);
        }

        var input = _runtime.CopyValue(request.Input);
        TxnContext context;
        try
        {
            // From the silo's reserved range; refilling it is a grain call, bounded by ExecutionTimeout here (Orleans' own
            // response timeout is the client's too, which would then hear nothing typed), and its failure reaches the
            // client typed. A refill that completes later still fills the range for the next ACTs.
            var next = _runtime.ActTids.NextAsync();
            var tid = next.IsCompletedSuccessfully ? next.Result : await next.AsTask().WaitAsync(_runtime.Options.ExecutionTimeout);
            context = new TxnContext(tid, TxnMode.Act, _self);
        }
        catch (TimeoutException)
        {
            throw new TransactionAbortedException(0, AbortReason.OrderingFailed,
                $"it could not get a transaction id within {_runtime.Options.ExecutionTimeout}; nothing of it ran.");
        }
        catch (Exception exception)
        {
            throw new TransactionAbortedException(0, AbortReason.OrderingFailed, $"it could not get a transaction id: {exception.Message}");
        }

        // Again with no await before Begin: a freeze that came during the awaits above must see this ACT (a migration
        // hands the actor over only once no ACT runs on it), or this ACT must see the freeze.
        RefuseWhileMigrating();
        var txn = Participant.Begin(context, isRoot: true);
        var (result, failure) = await RunMethodAsync(txn, method, input, _runtime.Options.ExecutionTimeout);
        SnapperException? outcome = failure ?? await _core.Coordinator.CommitAsync(txn);
        if (outcome is TransactionAbortedException aborted)
        {
            await _core.Coordinator.AbortEverywhereAsync(txn, aborted);
            _runtime.Metrics.Aborted(context.Mode, aborted.Reason);
            throw aborted;
        }

        if (outcome is not null)
        {
            _runtime.Metrics.InDoubt(context.Mode);
            throw outcome;
        }

        _runtime.Metrics.Committed(context.Mode);
        return new TxnResponse(_runtime.CopyValue(result));
    }

    /// <summary>An invalid access declaration is an argument error: no transaction starts.</summary>
    private void ValidateAccessInfo(string method, ActorAccessInfo accessInfo)
    {
        if (accessInfo.Accesses.Count == 0 || !accessInfo.Accesses.ContainsKey(_self))
        {
            throw new TransactionInputException(method,
                $"its first actor {_self} is not in the PACT's ActorAccessInfo; declare every actor the PACT calls, the first one included.");
        }

        foreach (var (actor, accesses) in accessInfo.Accesses)
        {
            if (accesses < 1)
            {
                throw new TransactionInputException(method, $"its ActorAccessInfo declares {accesses} access(es) to actor {actor}; declare at least one.");
            }
        }

        if (accessInfo.Keys is not { } declaredKeys)
        {
            return; // most PACTs declare whole actors only
        }

        foreach (var (actor, keys) in declaredKeys)
        {
            if (!accessInfo.Accesses.ContainsKey(actor) || keys is null || keys.Count == 0 || keys.Contains(null!))
            {
                throw new TransactionInputException(method, $"its ActorAccessInfo declares keys of actor {actor} {(accessInfo.Accesses.ContainsKey(actor) ? "but none, or a null one" : "without declaring the actor")}; declare it with AddKeys.");
            }
        }
    }

    async ValueTask<CallResponse> Actors.IActorCallee.ExecuteCall(CallRequest request)
    {
        await _runtime.CallKeys.VerifyAsync(request.Sender, nameof(Actors.IActorCallee.ExecuteCall));
        TakeLocalCallsOnce();
        return await ExecuteAdmittedCallAsync(request);
    }

    /// <summary>Runs a call inside a transaction that came from a transactional actor (proved by its silo's key, or local).</summary>
    private async ValueTask<CallResponse> ExecuteAdmittedCallAsync(CallRequest request)
    {
        var method = ResolveCall(request);
        var context = request.Context;
        var input = _runtime.CopyValue(request.Input);
        if (context.Mode == TxnMode.Pact)
        {
            var (pactResult, pactFailure, entered) = await RunPactMethodAsync(context, method, input);
            if (entered)
            {
                Schedule.Exit(context.Tid);
            }

            return pactResult is null && pactFailure is null ? CallResponse.PactDone : new CallResponse(_runtime.CopyValue(pactResult), [], pactFailure);
        }

        if (!_core.Transactions.TryGetValue(context.Tid, out var txn))
        {
            if (_core.Ended.TryGet(context.Tid, out var outcome))
            {
                // An actor remembers an abort only when its participant watchdog gave up on the transaction (heard nothing
                // from the first actor past ParticipantTimeout), and a call comes from a method of the transaction that is
                // still running: timing, not the caller's code, so the caller gets that transient reason, and a RetryPolicy
                // retries the ACT.
                throw outcome == Act.TxnOutcome.Aborted
                    ? new TransactionAbortedException(context.Tid, AbortReason.ParticipantTimeout,
                        $"actor {_self} had already aborted it on its own when this call arrived: it heard nothing from the first actor for longer than ParticipantTimeout.")
                    : new TransactionNotActiveException(context.Tid, $"it already ended on this actor ({outcome}).");
            }

            if (_runtime.Migrations.IsFrozen(_self) || !_runtime.ServesHere(_self))
            {
                throw new TransactionAbortedException(context.Tid, AbortReason.ActorMigrating, $"actor {_self} is being moved to another worker.");
            }

            txn = Participant.Begin(context, isRoot: false);
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

        return new CallResponse(_runtime.CopyValue(result), txn.ReachedFrom(_self), failure, txn.MaxBefore, txn.ReadUncommitted);
    }

    /// <summary>Runs one transactional method and classifies how it failed, if it did.</summary>
    private async Task<(object? Result, TransactionAbortedException? Failure)> RunMethodAsync(
        Actors.ActorTransaction<TState> txn, Actors.TransactionalMethodInvoker method, object? input, TimeSpan? timeout)
    {
        txn.RunningMethods++;
        var run = InvokeAsync(method, txn.Context, input).AsTask();
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
        txn.RunningMethods == 1 && txn.OutstandingCalls > 0 ? UnawaitedCall(txn.Tid, txn.OutstandingCalls) : null;

    private static TransactionAbortedException UnawaitedCall(long tid, int calls) =>
        new(tid, AbortReason.UnawaitedCall, $"a method returned while {calls} call(s) it started had not finished; await every CallActor.");

    private TransactionAbortedException Classify(long tid, Exception exception) => exception switch
    {
        TransactionAbortedException aborted when aborted.Tid == tid => aborted,
        TransactionNotActiveException or TransactionalMethodNotFoundException or TransactionInputException or KeyNotAcquiredException or DependencyException =>
            new TransactionAbortedException(tid, AbortReason.InvalidCall, exception.Message, exception),
        // The actor refused the call because it is moving, or Orleans could not deliver the call to its moving activation
        // (callers with an old address are forwarded a bounded number of times, then rejected): either way it never ran.
        ActorMigratingException => MigratingAbort(tid, exception),
        _ when UndeliveredCalls.WhileMoving(exception) => MigratingAbort(tid, exception),

        _ when _runtime.CanTravel(exception) =>
            new TransactionAbortedException(tid, AbortReason.UserException, $"{exception.GetType().Name}: {exception.Message}", exception),
        _ => new TransactionAbortedException(tid, $"{exception.GetType().Name}: {exception.Message}", exception.GetType().FullName!),
    };

    private static TransactionAbortedException MigratingAbort(long tid, Exception exception) =>
        new(tid, AbortReason.ActorMigrating, $"the call did not reach the actor's activation ({exception.Message}).", exception);

    // Not async itself: each mode's own async method is the only state machine a call allocates on the way out.
    private Task<TResult> CallCore<TResult>(TxnContext context, GrainId actor, string method, object? input, bool isInternal = false)
    {
        var request = new CallRequest(_runtime.CallKeys.Own, context, method, input, isInternal);
        return context.Mode == TxnMode.Pact ? CallPactAsync<TResult>(context, actor, request) : CallActAsync<TResult>(context, actor, request);
    }

    /// <summary>The callee's result as the caller's method group declared it (a result of another type fails the caller's method).</summary>
    private static TResult ResultAs<TResult>(object? result) => result is null ? default! : (TResult)result;

    private async Task<TResult> CallActAsync<TResult>(TxnContext context, GrainId actor, CallRequest request)
    {
        var txn = Participant.RequireActive(context);
        txn.OutstandingCalls++;
        CallResponse response;
        try
        {
            response = await _runtime.SendCall(actor, request);
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
        txn.DependsOn(response.MaxBefore);
        txn.ReadUncommitted |= response.ReadUncommitted;
        if (txn.Phase != Actors.ActorTxnPhase.Active)
        {
            // The transaction ended here while the call ran; the actors it reached must not wait for a decision.
            _ = _core.Coordinator.AbortParticipantsAsync(context.Tid, response.Participants);
            throw (SnapperException?)txn.Doomed ?? new TransactionNotActiveException(context.Tid, "it ended while the call was running.");
        }

        if (response.Failure is { } failure)
        {
            txn.Doom(failure);
            throw failure;
        }

        return ResultAs<TResult>(response.Result);
    }

    Task<PrepareResult> IActParticipant.Prepare(ActPhaseRequest request) =>
        FromSilo(request.Sender, nameof(IActParticipant.Prepare), request,
            static (actor, r) => actor.Participant.Prepare(r.Tid, r.MaxBefore, r.ReadUncommitted));

    Task IActParticipant.Commit(ActPhaseRequest request) =>
        FromSilo(request.Sender, nameof(IActParticipant.Commit), request, static (actor, r) => actor.Participant.Commit(r.Tid, r.MaxBefore));

    Task IActParticipant.Abort(Actors.SiloStamp sender, long tid) =>
        FromSilo(sender, nameof(IActParticipant.Abort), tid, static (actor, tid) => actor.Participant.Abort(tid));

    Task<TxnOutcome> IActParticipant.Resolve(Actors.SiloStamp sender, long tid, GrainId participant) =>
        FromSilo(sender, nameof(IActParticipant.Resolve), (tid, participant), static (actor, a) => actor.Participant.Resolve(a.tid, a.participant));

    /// <summary>
    /// Runs the work of one of Snapper's internal entry points (a call inside a transaction, 2PC, migration) once its
    /// sender proved to be a silo of the cluster (<see cref="Actors.SiloCallKeys"/>): at once for this silo's own calls,
    /// never for a client's, which is refused before it touches anything, so that nobody but Snapper can join a
    /// transaction, decide one or take a lock on an actor. <c>StartTxn</c> is the one entry point a client may call.
    /// </summary>
    /// <remarks>Not async: the work's own task is all there is to await when the sender is this silo.</remarks>
    private Task<T> FromSilo<TArgs, T>(Actors.SiloStamp sender, string method, TArgs args, Func<TransactionalActor<TState>, TArgs, Task<T>> work)
    {
        var verified = _runtime.CallKeys.VerifyAsync(sender, method);
        return verified.IsCompletedSuccessfully ? work(this, args) : AfterVerificationAsync(verified, this, args, work);

        static async Task<T> AfterVerificationAsync(ValueTask verified, TransactionalActor<TState> actor, TArgs args, Func<TransactionalActor<TState>, TArgs, Task<T>> work)
        {
            await verified;
            return await work(actor, args);
        }
    }

    /// <summary>The same for work without a result.</summary>
    private Task FromSilo<TArgs>(Actors.SiloStamp sender, string method, TArgs args, Func<TransactionalActor<TState>, TArgs, Task> work)
    {
        var verified = _runtime.CallKeys.VerifyAsync(sender, method);
        return verified.IsCompletedSuccessfully ? work(this, args) : AfterVerificationAsync(verified, this, args, work);

        static async Task AfterVerificationAsync(ValueTask verified, TransactionalActor<TState> actor, TArgs args, Func<TransactionalActor<TState>, TArgs, Task> work)
        {
            await verified;
            await work(actor, args);
        }
    }

    /// <summary>
    /// A new transaction is refused while the actor is frozen for a migration, or once it moved away. An activation left
    /// here after its move (this worker learned it from the master's directory, not from the helper, which died) leaves
    /// as the helper would have made it, so the caller's retry reaches the actor on its new worker.
    /// </summary>
    private void RefuseWhileMigrating()
    {
        if (_runtime.Migrations.IsFrozen(_self))
        {
            throw new ActorMigratingException(_self.ToString());
        }

        if (!_runtime.ServesHere(_self))
        {
            this.MigrateOnIdle();
            throw new ActorMigratingException(_self.ToString());
        }
    }

    async Task<Migration.MigratedState> Migration.IMigratingActor.HandOver(Actors.SiloStamp sender, TimeSpan bound)
    {
        await _runtime.CallKeys.VerifyAsync(sender, nameof(Migration.IMigratingActor.HandOver));

        // Frozen: nothing new is admitted, so what is in flight only ends. Polled, on the actor's own turns (which are
        // the only ones that touch its transactions); a migration waits milliseconds, not seconds, at low load.
        // Commits some participant has not acknowledged count as work in flight: only this worker can answer for them
        // (from memory and its log), and they are sent again until acknowledged (ActParticipant.Watch).
        var deadline = Environment.TickCount64 + (long)bound.TotalMilliseconds;
        while (_core.HasUncommittedWork || _core.Ended.HasUnacknowledgedCommits)
        {
            if (!_runtime.Migrations.IsFrozen(_self))
            {
                // Released meanwhile: the migration was rolled back, or its master restarted and the freeze ended with
                // it. New transactions come in again, so waiting for this actor to go idle would only wait out the bound.
                throw new MigrationException(_self.ToString(), MigrationFailure.RolledBack, "its freeze ended (the migration was abandoned) before its work in flight did.");
            }

            if (Environment.TickCount64 > deadline)
            {
                // Said here too: the caller's own response timeout may have passed already, and this says what was waited for.
                var failure = new MigrationException(_self.ToString(), MigrationFailure.RolledBack,
                    $"its work in flight ({_core.Transactions.Count} ACT(s), {_core.Schedule.UncommittedBatchCount} PACT batch(es), "
                    + $"{_core.Ended.UnacknowledgedCount} commit(s) not acknowledged by every participant) did not end within {bound}.");
                _core.Logger.LogWarning(failure, "Hand-over of actor {Actor} for a migration gave up", _self);
                throw failure;
            }

            await Task.Delay(2);
        }

        var state = _runtime.Serialize(_core.State.Committed);
        // For the log of the new worker a whole state: a copy made by deserializing has no base in any log, so a key-value
        // state encodes itself whole (an opaque one is its serialized bytes either way).
        var logged = _runtime.ForLog(_runtime.Deserialize<TState>(state));
        return new Migration.MigratedState(state, logged.Bytes, logged.Incremental, _core.State.LastSeq);
    }

    Task Migration.IMigratingActor.Leave(Actors.SiloStamp sender) =>
        FromSilo(sender, nameof(Migration.IMigratingActor.Leave), 0, static (actor, _) =>
        {
            if (!actor._runtime.ServesHere(actor._self))
            {
                // Orleans' migration: the state rides along (OnDehydrate), and the new activation is placed by the map,
                // which names the new worker now.
                actor.MigrateOnIdle();
            }

            return Task.CompletedTask;
        });

    Task<int> Migration.IMigratingActor.WorkerIndex(Actors.SiloStamp sender) =>
        FromSilo(sender, nameof(Migration.IMigratingActor.WorkerIndex), 0, static (actor, _) => Task.FromResult(actor._runtime.Options.WorkerIndex));

    /// <summary>
    /// Hands the committed state to the activation on the new silo when the actor migrates, if nothing is in flight
    /// here; work in flight stays with this silo's core (moving it is what live migration adds).
    /// </summary>
    void IGrainMigrationParticipant.OnDehydrate(IDehydrationContext dehydrationContext)
    {
        if (_core.HasUncommittedWork)
        {
            _core.Logger.LogWarning("Actor {Actor} migrates with uncommitted work; its state stays with this silo", _self);
            return;
        }

        dehydrationContext.TryAddValue(MigratedStateKey, (_runtime.Serialize(_core.State.Committed), _core.State.LastSeq));
        _runtime.Actors.Remove(_self);
    }

    void IGrainMigrationParticipant.OnRehydrate(IRehydrationContext rehydrationContext)
    {
        // Only the state is taken here; the core is made in OnActivateAsync, and only if this silo has none for the
        // actor (making one attaches it to the actor's schedule).
        if (rehydrationContext.TryGetValue<(byte[] State, long Seq)>(MigratedStateKey, out var moved))
        {
            _rehydrated = (ServiceProvider.GetRequiredService<Actors.SnapperRuntime>().Deserialize<TState>(moved.State), moved.Seq);
        }
    }

    void Act.IWatchedActivation.QueueWatch() =>
        GrainContext.Scheduler.QueueAction(static activation => ((TransactionalActor<TState>)activation!).WatchParticipants(), this);

    /// <summary>One check of the participant watchdog, in a turn of this activation (see <see cref="Act.ParticipantWatchdog"/>).</summary>
    private void WatchParticipants()
    {
        if (!_core.IsOwnedBy(this))
        {
            _runtime.Watchdog.Remove(this); // this activation ended, or a later one serves the actor (and is on the list if it has to be)
            return;
        }

        try
        {
            Participant.Watch(this);
        }
        catch (Exception exception)
        {
            _core.Logger.LogError(exception, "The participant watchdog failed on actor {Actor}; it checks again next round", _self);
        }

        _core.StopWatchIfIdle();
    }
}
