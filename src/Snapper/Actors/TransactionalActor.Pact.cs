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
        var (result, failure, _) = await RunPactMethodAsync(context, method, input, _runtime.Options.ExecutionTimeout);
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

        TransactionAbortedException? aborted;
        try
        {
            // Earlier batches end within their own ExecutionTimeout, so this bound is only a safety net.
            aborted = await outcome.WaitAsync(_runtime.Options.ExecutionTimeout + _runtime.Options.DecisionTimeout);
        }
        catch (TimeoutException)
        {
            pacts.Abort(ticket, new TransactionAbortedException(ticket.Tid, AbortReason.ExecutionTimeout, "its batch did not commit in time."));
            aborted = await outcome;
        }

        pacts.TakeDoom(ticket.Tid);
        if (aborted is not null)
        {
            var abort = aborted.Tid == ticket.Tid
                ? aborted
                : new TransactionAbortedException(ticket.Tid, AbortReason.CascadingAbort, $"transaction {aborted.Tid} failed and took its batch down: {aborted.Message}");
            _runtime.Metrics.Aborted(TxnMode.Pact, abort.Reason);
            throw abort;
        }

        _runtime.Metrics.Committed(TxnMode.Pact);
        return new TxnResponse(result);
    }

    /// <summary>Waits for the PACT's turn on this actor, then runs the method. Entered says whether the call counted as an access here.</summary>
    private async Task<(object? Result, TransactionAbortedException? Failure, bool Entered)> RunPactMethodAsync(
        TxnContext context, Actors.TransactionalMethodInvoker method, object? input, TimeSpan? timeout)
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

        var run = RunInTurnAsync(turn, method, context, input);
        try
        {
            return (timeout is { } bound ? await run.WaitAsync(bound) : await run, null, true);
        }
        catch (TimeoutException) when (!run.IsCompleted)
        {
            var late = new TransactionAbortedException(context.Tid, AbortReason.ExecutionTimeout, $"it did not finish within {timeout}, its wait for its turn included.");
            _runtime.Pacts.Doom(late);
            return (null, late, true);
        }
        catch (Exception exception)
        {
            var failure = Classify(context.Tid, exception);
            _runtime.Pacts.Doom(failure);
            return (null, failure, true);
        }
    }

    private async Task<object?> RunInTurnAsync(Task turn, Actors.TransactionalMethodInvoker method, TxnContext context, object? input)
    {
        await turn;
        return await method.Invoke(this, context, input);
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
