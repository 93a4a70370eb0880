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
/// <item>The client hears the result only when the batch committed; a PACT aborted by another one's failure
/// reports <see cref="AbortReason.CascadingAbort"/> with its own tid; a batch whose commit record could not be
/// confirmed durable reports <see cref="TransactionInDoubtException"/>. Every wait is bounded.</item>
/// </list>
/// </remarks>
public abstract partial class TransactionalActor<TState>
{
    private async Task<TxnResponse> RunPactAsync(Actors.TransactionalMethodInvoker method, object? input, ActorAccessInfo accessInfo)
    {
        var pacts = _runtime.Ordering;
        var ticket = await pacts.SubmitAsync(_self, accessInfo);

        // Taken before this PACT can finish, so that a commit racing with the lines below is not missed.
        var outcome = pacts.OutcomeAsync(ticket);
        var context = new TxnContext(ticket.Tid, TxnMode.Pact, _self) { GlobalBid = Math.Max(0, ticket.Gbid), GlobalWorkers = ticket.Workers };
        var running = RunPactMethodAsync(context, method, input);
        if (!running.IsCompleted)
        {
            var run = running.AsTask();
            if (await Task.WhenAny(run, outcome) != run)
            {
                // The batch ended before this method returned: aborted by another PACT, or by the service's bound
                // on batch execution (ExecutionTimeout) while this method was stuck.
                throw Ended(ticket, (await outcome)!);
            }

            running = new(run);
        }

        var (result, failure, _) = await running;
        failure ??= pacts.TakeDoom(ticket.Tid);
        if (failure is null)
        {
            Schedule.Exit(ticket.Tid);
            if (!await pacts.FinishAsync(ticket))
            {
                failure = new TransactionAbortedException(ticket.Tid, AbortReason.UnawaitedCall,
                    "its first method returned while a call it made was still running; await every CallActor.");
            }
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

    /// <summary>Waits for the PACT's turn on this actor, then runs the method. Entered says whether the call counted as an access here.</summary>
    private async ValueTask<(object? Result, TransactionAbortedException? Failure, bool Entered)> RunPactMethodAsync(
        TxnContext context, Actors.TransactionalMethodInvoker method, object? input)
    {
        Task turn;
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
            refused = _runtime.Ordering.Explain(context, refused);
            _runtime.Ordering.Doom(refused);
            return (null, refused, false);
        }

        TransactionAbortedException failure;
        try
        {
            await turn;
            var result = await InvokeAsync(method, context, input);
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

        _runtime.Ordering.Doom(failure);
        return (null, failure, true);
    }

    private async Task<TResult> CallPactAsync<TResult>(TxnContext context, GrainId actor, CallRequest request)
    {
        CallResponse response;
        Schedule.CallStarted(context.Tid);
        try
        {
            response = await _runtime.Callee(actor).ExecuteCall(request);
        }
        catch (Exception exception)
        {
            var abort = Classify(context.Tid, exception);
            _runtime.Ordering.Doom(abort);
            throw abort;
        }
        finally
        {
            Schedule.CallEnded(context.Tid);
        }

        if (response.Failure is { } failure)
        {
            _runtime.Ordering.Doom(failure);
            throw failure;
        }

        return ResultAs<TResult>(response.Result);
    }
}
