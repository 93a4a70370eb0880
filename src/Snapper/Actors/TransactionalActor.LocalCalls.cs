using Microsoft.Extensions.Logging;

namespace Snapper;

/// <summary>
/// Local calls (<see cref="Hosting.SnapperOptions.LocalCalls"/>): a call inside a transaction, or an ACT's prepare or
/// commit, from an actor of the same silo runs on this activation's task scheduler instead of arriving as an Orleans
/// message.
/// </summary>
/// <remarks>
/// <para>
/// An Orleans call between two grains of one silo costs a message, a callback entry, an invokable, a response and
/// their state machines on both sides, about as much CPU as the PACT's own bookkeeping. A local call is one task queued
/// on the callee activation's scheduler: it runs as a turn of that activation, interleaved with its other turns at
/// awaits exactly as a call to a reentrant grain is (transactional actors are reentrant), and concurrency control
/// decides who touches the state, as for any call.
/// </para>
/// <para>Invariants:</para>
/// <list type="bullet">
/// <item>An activation starts taking local calls at the first transaction or call that reaches it through Orleans (the
/// one that activated it, as a rule), so never before its activation completed (the subclass's
/// <see cref="Grain.OnActivateAsync"/> included: Orleans delivers no message before that), and only while it owns the
/// actor's core.</item>
/// <item>Orleans does not see local calls, so it would end the activation under them. Its end (the last life-cycle stage's
/// stop, which Orleans runs after <see cref="Grain.OnDeactivateAsync"/>) waits for them in two steps, together bounded by
/// ExecutionTimeout (after which a PACT has aborted anyway) and by Orleans' own deactivation timeout. First it still takes
/// local calls and waits for a moment when none runs: a call it is running may call another actor that calls back into
/// this one, and refusing that call would send it to Orleans, which holds it for the next activation, which waits for
/// this one to end. Then it leaves the directory, refuses new ones, and waits for the last admitted ones. Only then does
/// it give up the core, so that two activations never run on one core. A call is admitted or refused with one counter
/// and one state, each side writing its own with a full fence before reading the other's, so no call is admitted unseen
/// by the step that waits. An admitted call runs here even if the end has begun meanwhile, for the same reason.</item>
/// <item>Orleans counts only its messages as activity, so an activation reached by local calls alone would be collected
/// as idle while in use (and every call to it would then wait for its end and a new activation): a local call keeps
/// its activation alive for twice the collection age Orleans applies to this actor's class (its
/// <c>[CollectionAgeLimit]</c>, else <c>GrainCollectionOptions.ClassSpecificCollectionAge</c>, else the silo's
/// <c>CollectionAge</c>), renewed at most every quarter of that age, so an actor is collected only once neither Orleans
/// nor local calls have reached it for a while. A class Orleans never collects needs none. Orleans keeps one deadline
/// per activation, and each <c>DelayDeactivation</c> replaces it: the actor's own requests go through
/// <see cref="DelayDeactivation"/> here, which remembers them, and the keep-alive never shortens a longer one.</item>
/// <item>A local call skips the silo-key check of Snapper's entry points (<see cref="Actors.IActorCallee.ExecuteCall"/>,
/// <see cref="Act.IActParticipant"/>): it never leaves the
/// process, and nothing outside Snapper reaches <see cref="Actors.ILocalCallee"/>. Input and result are copied as for an
/// Orleans call inside a silo (by <see cref="Actors.SnapperRuntime.CopyValue"/>).</item>
/// </list>
/// </remarks>
public abstract partial class TransactionalActor<TState>
{
    // This activation's task scheduler, from its first Orleans call into a transaction; null while it takes no local calls.
    private TaskScheduler? _turns;
    private bool _localCallsChecked;
    // Local calls admitted and not finished (queued or running); changed from callers' threads, so with Interlocked.
    private int _localCalls;
    // Open, Ending (the activation's end began; local calls are still taken until none runs) or Closed (refused); written
    // with Interlocked and read with Volatile, as callers read it from their own threads.
    private int _localCallState;
    private const int Open = 0, Ending = 1, Closed = 2;
    private TaskCompletionSource? _localCallsDrained;
    // When a local call next renews this activation's keep-alive (Environment.TickCount64).
    private long _keepAliveRenewAt;
    // How long a local call keeps this activation alive (twice its class's collection age); zero: it needs no keep-alive.
    private TimeSpan _localCallKeepAlive;
    // Until when the actor itself asked Orleans to keep it (Environment.TickCount64; long.MaxValue: for ever; 0: no request).
    private long _ownKeepAliveUntil;

    /// <summary>
    /// Starts taking local calls, at the first Orleans call into a transaction here (on this activation's scheduler, so
    /// <see cref="TaskScheduler.Current"/> is the one to queue local calls on).
    /// </summary>
    private void TakeLocalCallsOnce()
    {
        if (_localCallsChecked)
        {
            return;
        }

        _localCallsChecked = true;

        // Outside an activation's scheduler (never expected in a silo) there is nothing to queue calls on: Orleans calls only.
        if (_core is not null && _runtime.Options.LocalCalls && Volatile.Read(ref _localCallState) == Open && TaskScheduler.Current != TaskScheduler.Default)
        {
            _turns = TaskScheduler.Current;
            _localCallKeepAlive = _runtime.LocalCallKeepAlive(_self.Type);
            _runtime.Actors.ServeLocalCalls(_self, this);
        }
    }

    /// <summary>
    /// Waits until no local call runs here, then stops taking them and waits for the last admitted ones (the last
    /// life-cycle stage's stop), so that the core is given up only when no method of this activation runs any more.
    /// </summary>
    private async Task StopLocalCallsAsync(CancellationToken cancellation)
    {
        if (_turns is null)
        {
            return;
        }

        var bound = _runtime.Options.ExecutionTimeout / 2;
        var started = System.Diagnostics.Stopwatch.GetTimestamp();
        var ending = WhenNoLocalCallRunsAsync(Ending, bound, cancellation);
        _runtime.TestHooks.LocalCallsEnding?.Invoke(_self);
        if (!await ending)
        {
            _core.Logger.LogDebug("Actor {Actor} still ran local calls {Bound} after its activation began to end; it now refuses new ones", _self, bound);
        }

        _runtime.Actors.StopLocalCalls(_self, this);
        if (!await WhenNoLocalCallRunsAsync(Closed, bound, cancellation))
        {
            // Each wait has its own bound, and Orleans' deactivation timeout may end either sooner: say how long it was.
            _core.Logger.LogWarning("Actor {Actor} ends its activation with {Calls} local call(s) still running after {Waited}",
                _self, Volatile.Read(ref _localCalls), System.Diagnostics.Stopwatch.GetElapsedTime(started));
        }
    }

    /// <summary>Enters <paramref name="state"/> and waits for a moment when no admitted local call runs; false if none came within <paramref name="bound"/>.</summary>
    private async Task<bool> WhenNoLocalCallRunsAsync(int state, TimeSpan bound, CancellationToken cancellation)
    {
        // Published before the state, so that whoever ends the last call after seeing the state completes this one.
        var drained = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        _localCallsDrained = drained;
        Interlocked.Exchange(ref _localCallState, state);
        if (Volatile.Read(ref _localCalls) == 0)
        {
            return true;
        }

        try
        {
            await drained.Task.WaitAsync(bound, cancellation);
            return true;
        }
        catch (Exception exception) when (exception is TimeoutException or OperationCanceledException)
        {
            return false;
        }
    }

    Task<Actors.CallResponse>? Actors.ILocalCallee.TryCallLocal(Actors.CallRequest request)
    {
        if (!AdmitLocalCall())
        {
            return null;
        }

        try
        {
            _runtime.TestHooks.LocalCallStarted?.Invoke(_self);
        }
        catch
        {
            LocalCallEnded();
            throw;
        }

        _runtime.Metrics.LocalCallRan();
        return RunLocalAsync(request, static (actor, r) => actor.ExecuteAdmittedCallAsync(r));
    }

    Task<Act.PrepareResult>? Actors.ILocalCallee.TryPrepareLocal(Act.ActPhaseRequest request)
    {
        if (!AdmitLocalCall())
        {
            return null;
        }

        _runtime.Metrics.LocalPrepareRan();
        return RunLocalAsync(request, static (actor, r) => new ValueTask<Act.PrepareResult>(actor.Participant.Prepare(r.Tid, r.MaxBefore, r.ReadUncommitted)));
    }

    Task? Actors.ILocalCallee.TryCommitLocal(Act.ActPhaseRequest request)
    {
        if (!AdmitLocalCall())
        {
            return null;
        }

        _runtime.Metrics.LocalCommitRan();
        return RunLocalAsync(request, static async (actor, r) =>
        {
            await actor.Participant.Commit(r.Tid, r.MaxBefore);
            return true;
        });
    }

    /// <summary>Counts a local call in, unless the activation refuses them by now (then false, and nothing is counted).</summary>
    private bool AdmitLocalCall()
    {
        Interlocked.Increment(ref _localCalls);
        if (Volatile.Read(ref _localCallState) == Closed)
        {
            LocalCallEnded();
            return false;
        }

        return true;
    }

    /// <summary>Runs admitted work as a turn of this activation, and counts it out when it ends.</summary>
    private async Task<TResult> RunLocalAsync<TArg, TResult>(TArg arg, Func<TransactionalActor<TState>, TArg, ValueTask<TResult>> work)
    {
        try
        {
            await new Actors.ActivationTurn(_turns!);
            KeepAliveForLocalCalls();
            return await work(this, arg);
        }
        finally
        {
            LocalCallEnded();
        }
    }

    /// <summary>Keeps this activation from idle collection while local calls reach it (on its scheduler).</summary>
    private void KeepAliveForLocalCalls()
    {
        var now = Environment.TickCount64;
        var keepAlive = _localCallKeepAlive;
        if (now < _keepAliveRenewAt || keepAlive <= TimeSpan.Zero)
        {
            return;
        }

        var keepAliveMs = (long)keepAlive.TotalMilliseconds;
        _keepAliveRenewAt = now + keepAliveMs / 8;
        if (_ownKeepAliveUntil - now < keepAliveMs)
        {
            base.DelayDeactivation(keepAlive);
        }
    }

    /// <summary>
    /// Delays the deactivation of this activation, as <see cref="Grain.DelayDeactivation(TimeSpan)"/> does: a positive
    /// <paramref name="timeSpan"/> keeps it at least that long, <see cref="Timeout.InfiniteTimeSpan"/> or
    /// <see cref="TimeSpan.MaxValue"/> for ever, and <see cref="TimeSpan.Zero"/> cancels the request.
    /// </summary>
    /// <remarks>
    /// Snapper keeps an actor that calls from its own silo reach alive by the same Orleans deadline; this remembers the
    /// actor's own request so that Snapper's keep-alive never shortens it, and after it the next such call renews
    /// Snapper's keep-alive at once if it is the longer one. Orleans' method is not virtual, so this one hides it: an
    /// actor's own calls reach it, but a request made on the activation's context directly
    /// (<c>GrainContext.DelayDeactivation</c>) is not seen, and the keep-alive may shorten it.
    /// </remarks>
    protected new void DelayDeactivation(TimeSpan timeSpan)
    {
        var now = Environment.TickCount64;
        // TimeSpan.MaxValue is about 9.2e14 ms, far from overflowing the tick count.
        _ownKeepAliveUntil = timeSpan == Timeout.InfiniteTimeSpan ? long.MaxValue
            : timeSpan <= TimeSpan.Zero ? 0
            : now + (long)timeSpan.TotalMilliseconds;
        _keepAliveRenewAt = 0;
        base.DelayDeactivation(timeSpan);
    }

    private void LocalCallEnded()
    {
        if (Interlocked.Decrement(ref _localCalls) == 0 && Volatile.Read(ref _localCallState) != Open)
        {
            _localCallsDrained?.TrySetResult();
        }
    }

}
