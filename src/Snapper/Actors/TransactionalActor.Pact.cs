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
/// <item>The client hears the result only when the batch committed; a PACT aborted by another one's failure
/// reports <see cref="AbortReason.CascadingAbort"/> with its own tid.</item>
/// </list>
/// </remarks>
public abstract partial class TransactionalActor<TState>
{
    private async Task<TxnResponse> RunPactAsync(Actors.TransactionalMethodInvoker method, object? input, ActorAccessInfo accessInfo)
    {
        if (accessInfo.Accesses.Count == 0 || !accessInfo.Accesses.ContainsKey(_self))
        {
            throw new TransactionAbortedException(0, AbortReason.UndeclaredAccess,
                $"its first actor {_self} is not in its ActorAccessInfo; declare every actor the PACT calls, the first one included.");
        }

        if (accessInfo.Accesses.Values.Any(count => count < 1))
        {
            throw new TransactionAbortedException(0, AbortReason.UndeclaredAccess, "an ActorAccessInfo declares fewer than one access to an actor.");
        }

        var pacts = _runtime.Pacts;
        var ticket = await pacts.SubmitAsync(_self, accessInfo);

        // Taken before this PACT can finish, so that a commit racing with the lines below is not missed.
        var outcome = pacts.OutcomeAsync(ticket);
        var context = new TxnContext(ticket.Tid, TxnMode.Pact, _self);
        var run = RunPactMethodAsync(context, method, input);
        if (await Task.WhenAny(run, outcome) != run)
        {
            // The batch ended before this method returned: aborted by another PACT, or by the service's bound
            // on batch execution (ExecutionTimeout) while this method was stuck.
            throw Aborted(ticket, (await outcome)!);
        }

        var (result, failure, _) = await run;
        failure ??= pacts.TakeDoom(ticket.Tid);
        if (failure is null)
        {
            _schedule.Exit(ticket.Tid);
            if (!pacts.Finish(ticket.Tid, accessInfo))
            {
                failure = new TransactionAbortedException(ticket.Tid, AbortReason.UnawaitedCall,
                    "its first method returned while a call it made was still running; await every CallActor.");
            }
        }

        if (failure is not null)
        {
            pacts.Abort(ticket, failure);
        }

        // Bounded: the service aborts any batch still uncommitted after ExecutionTimeout.
        if (await outcome is { } aborted)
        {
            throw Aborted(ticket, aborted);
        }

        _runtime.Metrics.Committed(TxnMode.Pact);
        return new TxnResponse(_runtime.CopyValue(result));
    }

    /// <summary>The exception a PACT's client gets, with the PACT's own tid.</summary>
    private TransactionAbortedException Aborted(PactTicket ticket, TransactionAbortedException aborted)
    {
        _runtime.Pacts.TakeDoom(ticket.Tid);
        var abort = aborted.Tid == ticket.Tid
            ? aborted
            : aborted.Reason == AbortReason.ExecutionTimeout
                ? new TransactionAbortedException(ticket.Tid, AbortReason.ExecutionTimeout, $"its batch did not commit within {_runtime.Options.ExecutionTimeout}.")
                : new TransactionAbortedException(ticket.Tid, AbortReason.CascadingAbort,
                    $"transaction {aborted.Tid} failed ({aborted.Reason}) and every batch not yet committed was aborted with it.");
        _runtime.Metrics.Aborted(TxnMode.Pact, abort.Reason);
        return abort;
    }

    /// <summary>Waits for the PACT's turn on this actor, then runs the method. Entered says whether the call counted as an access here.</summary>
    private async Task<(object? Result, TransactionAbortedException? Failure, bool Entered)> RunPactMethodAsync(
        TxnContext context, Actors.TransactionalMethodInvoker method, object? input)
    {
        Task turn;
        try
        {
            turn = _schedule.EnterAsync(context.Tid);
        }
        catch (TransactionAbortedException refused)
        {
            _runtime.Pacts.Doom(refused);
            return (null, refused, false);
        }

        try
        {
            await turn;
            return (await method.Invoke(this, context, input), null, true);
        }
        catch (Exception exception)
        {
            var failure = Classify(context.Tid, exception);
            _runtime.Pacts.Doom(failure);
            return (null, failure, true);
        }
    }

    private async Task<object?> CallPactAsync(TxnContext context, ITransactionalActor actor, string method, object? input)
    {
        CallResponse response;
        try
        {
            response = await actor.ExecuteCall(new CallRequest(context, method, input));
        }
        catch (Exception exception)
        {
            var abort = Classify(context.Tid, exception);
            _runtime.Pacts.Doom(abort);
            throw abort;
        }

        if (response.Failure is { } failure)
        {
            _runtime.Pacts.Doom(failure);
            throw failure;
        }

        return response.Result;
    }
}
