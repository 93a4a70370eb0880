using Snapper.Actors;
using Snapper.Pact;

namespace Snapper;

/// <summary>The PACT side of a transactional actor (thesis §3.3.2): running in schedule order, and batch outcomes.</summary>
/// <remarks>
/// Invariants:
/// <list type="bullet">
/// <item>A PACT method runs on this actor only after the schedule gave the PACT its turn, and the schedule counts
/// every call against the declared accesses; an undeclared or extra call fails before any user code runs.</item>
/// <item>A failure anywhere in the PACT dooms it where its first actor looks (even if user code caught the
/// failed call), and the first actor aborts the batch before releasing its own access, so a failed PACT's batch
/// can never complete and commit.</item>
/// <item>Atomicity does not depend on timing: every call a PACT method starts is counted on the calling actor until it
/// returns, and a method that returns with a call still counted fails the PACT (<see cref="AbortReason.UnawaitedCall"/>),
/// whether the callee was fast or slow. So a PACT never commits while part of it is still running or was lost.</item>
/// <item>A call's end is counted on the calling actor where the call's response arrives, not on a turn of the caller
/// (which would cost each call of a <c>Task.WhenAll</c> a queued turn of its own), except while the method of the PACT
/// that made it is still in the synchronous part that started it (<see cref="_pactMethodStarting"/>): then the method
/// has not awaited the call yet, and its end waits for the caller's next turn, so that a method that starts a call and
/// returns without awaiting it is caught even if the callee finished first.</item>
/// <item>The client hears the result only when the batch committed; a PACT aborted by another one's failure
/// reports <see cref="AbortReason.CascadingAbort"/> with its own tid; a batch whose commit record could not be
/// confirmed durable reports <see cref="TransactionInDoubtException"/>. Every wait is bounded.</item>
/// </list>
/// </remarks>
public abstract partial class TransactionalActor<TState>
{
    private const long NoPactMethodStarting = long.MinValue;

    // The tid of the PACT whose method is running the synchronous part that its turn here started (its body up to its
    // first await of something unfinished, and the unawaited-call check right after it if it returned), else
    // NoPactMethodStarting. Written on this activation's turns only; read by the ends of calls, on any thread. Turns of
    // one activation never overlap, so one field serves every PACT.
    private long _pactMethodStarting = NoPactMethodStarting;

    private async Task<TxnResponse> RunPactAsync(Actors.TransactionalMethodInvoker method, object? input, ActorAccessInfo accessInfo)
    {
        var pacts = _runtime.Ordering;
        var ticket = await pacts.SubmitAsync(_self, accessInfo);

        // Taken before this PACT can finish, so that a commit racing with the lines below is not missed.
        var outcome = pacts.OutcomeAsync(ticket);
        var context = new TxnContext(ticket.Tid, TxnMode.Pact, _self) { GlobalBid = Math.Max(0, ticket.Gbid), GlobalWorkers = ticket.Workers };
        object? result;
        TransactionAbortedException? failure;
        if (StartPactMethodNow(context, method, input, out var running) is { } started)
        {
            // The usual case: the method started in this frame and is awaited here, with no state machine in between, so
            // that its end resumes this method directly.
            if (!started.IsCompleted && await Task.WhenAny(started, outcome) != started)
            {
                // The batch ended before this method returned: aborted by another PACT, or by the service's bound
                // on batch execution (ExecutionTimeout) while this method was stuck.
                throw Ended(ticket, (await outcome)!);
            }

            (result, failure) = PactMethodReturned(context, method, started);
            Volatile.Write(ref _pactMethodStarting, NoPactMethodStarting);
        }
        else
        {
            if (!running.IsCompleted)
            {
                var run = running.AsTask();
                if (await Task.WhenAny(run, outcome) != run)
                {
                    throw Ended(ticket, (await outcome)!);
                }

                running = new(run);
            }

            (result, failure, _) = await running;
        }

        failure ??= pacts.TakeDoom(ticket.Tid);
        if (failure is null)
        {
            Schedule.Exit(ticket.Tid);
            failure = await pacts.FinishAsync(ticket);
        }

        if (failure is not null)
        {
            pacts.Abort(ticket, failure);
        }

        // Bounded: the service aborts a batch still running after ExecutionTimeout, and reports one whose commit record
        // is not durable within LogWriteTimeout as in doubt.
        if (await outcome is { } ended)
        {
            throw Ended(ticket, ended);
        }

        _runtime.Metrics.Committed(TxnMode.Pact);
        return new TxnResponse(_runtime.CopyValue(result));
    }

    /// <summary>
    /// Starts a PACT's method on its first actor at once when nothing has to be awaited first: a local PACT (no global
    /// batch to wait for) whose turn here has come, on an actor with no after-method step. Returns the method's own task
    /// then. Otherwise returns null and <paramref name="running"/> is the general path (<see cref="RunPactMethodAsync"/>),
    /// given the turn if this already entered it, so that the PACT enters this actor once either way.
    /// </summary>
    private Task? StartPactMethodNow(
        TxnContext context, Actors.TransactionalMethodInvoker method, object? input,
        out ValueTask<(object? Result, TransactionAbortedException? Failure, bool Entered)> running)
    {
        running = default;
        if (context.GlobalBid > 0 || HasAfterMethod)
        {
            running = RunPactMethodAsync(context, method, input);
            return null;
        }

        Task turn;
        try
        {
            turn = Schedule.EnterAsync(context.Tid);
        }
        catch (TransactionAbortedException refused)
        {
            running = new((null, Refused(context, refused), false));
            return null;
        }

        if (!turn.IsCompletedSuccessfully)
        {
            running = RunPactMethodAsync(context, method, input, turn);
            return null;
        }

        // Until the method first waits for something (or, if it returns at once, until its calls are checked in
        // RunPactAsync), a call of it that ends is counted out on this actor's next turn.
        _pactMethodStarting = context.Tid;
        Task started;
        try
        {
            started = method.Start(this, context, input);
        }
        catch (Exception exception)
        {
            // As an async method would: a method that throws before returning its task fails the task.
            started = Task.FromException(exception);
        }

        if (!started.IsCompleted)
        {
            Volatile.Write(ref _pactMethodStarting, NoPactMethodStarting);
        }

        return started;
    }

    /// <summary>
    /// A PACT's method on this actor returned (<paramref name="returned"/> is complete): its result, or the failure that
    /// dooms the PACT (its exception, or a call it started and did not await).
    /// </summary>
    private (object? Result, TransactionAbortedException? Failure) PactMethodReturned(TxnContext context, Actors.TransactionalMethodInvoker method, Task returned)
    {
        TransactionAbortedException failure;
        try
        {
            // Rethrows what awaiting it would.
            returned.GetAwaiter().GetResult();
            if (Schedule.UnawaitedCalls(context.Tid) is var calls and > 0)
            {
                failure = UnawaitedCall(context.Tid, calls);
            }
            else
            {
                return (method.ResultOf(returned), null);
            }
        }
        catch (Exception exception)
        {
            failure = Classify(context.Tid, exception);
        }

        _runtime.Ordering.Doom(failure);
        return (null, failure);
    }

    /// <summary>A PACT refused on entering this actor (an undeclared or extra access): the failure that dooms it.</summary>
    private TransactionAbortedException Refused(TxnContext context, TransactionAbortedException refused)
    {
        refused = _runtime.Ordering.Explain(context, refused);
        _runtime.Ordering.Doom(refused);
        return refused;
    }

    /// <summary>The exception a PACT's client gets, with the PACT's own tid.</summary>
    private SnapperException Ended(PactTicket ticket, SnapperException outcome)
    {
        _runtime.Ordering.TakeDoom(ticket.Tid);
        if (outcome is not TransactionAbortedException aborted)
        {
            _runtime.Metrics.InDoubt(TxnMode.Pact);
            return outcome is TransactionInDoubtException { Tid: var tid } && tid == ticket.Tid
                ? outcome
                : new TransactionInDoubtException(ticket.Tid, outcome.Message, outcome);
        }

        // A cascade names the transaction that failed first and carries its exception, so a client sees why (a user
        // exception, a lost worker, ...) and not only that another transaction failed.
        var cause = aborted is { Reason: AbortReason.CascadingAbort, InnerException: TransactionAbortedException first } ? first : aborted;
        var abort = aborted.Tid == ticket.Tid
            ? aborted
            : aborted.Reason is AbortReason.ExecutionTimeout or AbortReason.LogWriteFailed
                ? new TransactionAbortedException(ticket.Tid, aborted.Reason, $"its batch did not commit: {aborted.Message}")
                : new TransactionAbortedException(ticket.Tid, AbortReason.CascadingAbort,
                    $"transaction {cause.Tid} failed ({cause.Reason}) and every batch not yet committed was aborted with it.", cause);
        _runtime.Metrics.Aborted(TxnMode.Pact, abort.Reason);
        return abort;
    }

    /// <summary>
    /// Waits for the PACT's turn on this actor, then runs the method. Entered says whether the call counted as an access
    /// here; <paramref name="entered"/> is the turn when the caller already entered it.
    /// </summary>
    private async ValueTask<(object? Result, TransactionAbortedException? Failure, bool Entered)> RunPactMethodAsync(
        TxnContext context, Actors.TransactionalMethodInvoker method, object? input, Task? entered = null)
    {
        Task turn;
        if (entered is not null)
        {
            turn = entered;
        }
        else
        {
            try
            {
                if (context.GlobalBid > 0)
                {
                    // The call may have outrun the global batch's sub-batch to this worker.
                    await _runtime.Ordering.WhenGlobalMergedAsync(context);
                }

                turn = Schedule.EnterAsync(context.Tid);
            }
            catch (TransactionAbortedException refused)
            {
                return (null, Refused(context, refused), false);
            }
        }

        TransactionAbortedException failure;
        try
        {
            await turn;

            // As in StartPactMethodNow: the method's synchronous part, and the check right after it if it returned then.
            _pactMethodStarting = context.Tid;
            var run = InvokeAsync(method, context, input);
            if (!run.IsCompleted)
            {
                Volatile.Write(ref _pactMethodStarting, NoPactMethodStarting);
            }

            var result = await run;
            if (Schedule.UnawaitedCalls(context.Tid) is var calls and > 0)
            {
                failure = UnawaitedCall(context.Tid, calls);
            }
            else
            {
                return (result, null, true);
            }
        }
        catch (Exception exception)
        {
            failure = Classify(context.Tid, exception);
        }
        finally
        {
            // On the turn that checked the calls: no other turn of this activation runs meanwhile.
            Volatile.Write(ref _pactMethodStarting, NoPactMethodStarting);
        }

        _runtime.Ordering.Doom(failure);
        return (null, failure, true);
    }

    /// <remarks>
    /// Everything after the call's response runs where the response arrived (the callee's turn, for a local call), not on
    /// a turn of this actor: it touches only what is safe from any thread (the schedule's call count under its lock, the
    /// service's doom marks, the response). The caller's own await still resumes on its turn. A <c>Task.WhenAll</c> of
    /// four calls then costs this actor one queued turn instead of four. Only while the calling method has not yet
    /// awaited anything (see <see cref="_pactMethodStarting"/>) does the end wait for this actor's next turn.
    /// </remarks>
    private async Task<TResult> CallPactAsync<TResult>(TxnContext context, GrainId actor, CallRequest request)
    {
        var callerTurns = TaskScheduler.Current;
        var schedule = Schedule; // the one the call is counted on, whatever happens to this activation's core meanwhile
        CallResponse? response = null;
        TransactionAbortedException? failure;
        schedule.CallStarted(context.Tid);
        try
        {
#pragma warning disable ORLEANS0014 // the rest of this method is safe off this activation's turns (see remarks)
            response = await _runtime.SendCall(actor, request).ConfigureAwait(false);
#pragma warning restore ORLEANS0014
            failure = response.Failure;
        }
        catch (Exception exception)
        {
            failure = Classify(context.Tid, exception);
        }

        // Doomed before the call counts as ended, so that whoever sees no call outstanding also sees the failure.
        if (failure is not null)
        {
            _runtime.Ordering.Doom(failure);
        }

        _runtime.TestHooks.PactCallAnswered?.Invoke(_self);
        if (Volatile.Read(ref _pactMethodStarting) == context.Tid)
        {
            // The method that made the call has not awaited it (yet): counted out on its actor's next turn, as it would be
            // after any await, so a method returning without the await finds the call still outstanding.
            await new Actors.ActivationTurn(callerTurns);
        }

        schedule.CallEnded(context.Tid);
        if (failure is not null)
        {
            throw failure;
        }

        return ResultAs<TResult>(response!.Result);
    }
}
