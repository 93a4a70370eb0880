using System.Runtime.CompilerServices;

namespace Snapper;

/// <summary>
/// Client-side submission of transactions (thesis Fig. 3.2), typed: the first method is named by its method
/// group on the actor reference, as in <c>account.StartTxn(account.Transfer, input)</c>, so the compiler
/// checks its name, input and result types.
/// </summary>
public static class TransactionalActorExtensions
{
    /// <summary>
    /// Runs an ACT whose first method is <paramref name="method"/> on <paramref name="actor"/>; with
    /// <paramref name="retry"/>, again as a new transaction after each transient abort, as the policy allows.
    /// </summary>
    /// <exception cref="ArgumentException">Thrown at once: <paramref name="method"/> is not a transactional method of <paramref name="actor"/>.</exception>
    /// <exception cref="TransactionAbortedException">The transaction (its last attempt) aborted; nothing of it remains.</exception>
    // A method returning Task<T> also converts to the Task overload, which C# would otherwise prefer.
    // These entry points are not async methods: a transaction's client then pays for one state machine (the attempt
    // loop), not four, and a wrong argument is thrown at once, as .NET's own task-returning methods do.
    [OverloadResolutionPriority(1)]
    public static Task<TResult> StartTxn<TActor, TInput, TResult>(
        this TActor actor, Func<TxnContext, TInput, Task<TResult>> method, TInput input, RetryPolicy? retry = null)
        where TActor : ITransactionalActor =>
        Submit<TResult>(actor, new TxnRequest(TransactionalMethod.NameOf(actor, method), input), retry);

    /// <summary>Runs an ACT whose first method, returning no result, is <paramref name="method"/> on <paramref name="actor"/>; see the overload with a result.</summary>
    /// <exception cref="ArgumentException">Thrown at once: <paramref name="method"/> is not a transactional method of <paramref name="actor"/>.</exception>
    /// <exception cref="TransactionAbortedException">The transaction (its last attempt) aborted; nothing of it remains.</exception>
    public static Task StartTxn<TActor, TInput>(
        this TActor actor, Func<TxnContext, TInput, Task> method, TInput input, RetryPolicy? retry = null)
        where TActor : ITransactionalActor =>
        Submit<object?>(actor, new TxnRequest(TransactionalMethod.NameOf(actor, method), input), retry);

    /// <summary>
    /// Runs a PACT (thesis §3.3.2): a transaction that declares up front every actor it calls and how many times,
    /// including the first actor's own call. PACTs are ordered before they run and never abort on conflicts.
    /// </summary>
    /// <exception cref="ArgumentException">Thrown at once: <paramref name="method"/> is not a transactional method of <paramref name="actor"/>, or <paramref name="accessInfo"/> is null.</exception>
    /// <exception cref="TransactionAbortedException">
    /// The transaction aborted: user code threw, it called an actor it did not declare (<see cref="AbortReason.UndeclaredAccess"/>),
    /// or a PACT of its batch or an earlier uncommitted batch failed (<see cref="AbortReason.CascadingAbort"/>). Nothing of it remains.
    /// </exception>
    [OverloadResolutionPriority(1)]
    public static Task<TResult> StartTxn<TActor, TInput, TResult>(
        this TActor actor, Func<TxnContext, TInput, Task<TResult>> method, TInput input, ActorAccessInfo accessInfo, RetryPolicy? retry = null)
        where TActor : ITransactionalActor
    {
        ArgumentNullException.ThrowIfNull(accessInfo);
        return Submit<TResult>(actor, new TxnRequest(TransactionalMethod.NameOf(actor, method), input, accessInfo), retry);
    }

    /// <summary>Runs a PACT whose first method returns no result; see the overload with a result.</summary>
    /// <exception cref="ArgumentException">Thrown at once: <paramref name="method"/> is not a transactional method of <paramref name="actor"/>, or <paramref name="accessInfo"/> is null.</exception>
    public static Task StartTxn<TActor, TInput>(
        this TActor actor, Func<TxnContext, TInput, Task> method, TInput input, ActorAccessInfo accessInfo, RetryPolicy? retry = null)
        where TActor : ITransactionalActor
    {
        ArgumentNullException.ThrowIfNull(accessInfo);
        return Submit<object?>(actor, new TxnRequest(TransactionalMethod.NameOf(actor, method), input, accessInfo), retry);
    }

    /// <summary>
    /// How long <c>StartTxn</c> keeps submitting a transaction again by itself while an actor it needs is being moved to
    /// another worker (<see cref="ActorMigratingException"/>, or an abort with <see cref="AbortReason.ActorMigrating"/>).
    /// A migration freezes an actor for about as long as its work in flight takes to commit.
    /// </summary>
    public static readonly TimeSpan MigrationRetryBound = TimeSpan.FromSeconds(30);

    // Each attempt is a call of its own to the first actor, which gives it a new tid.
    private static Task<TResult> Submit<TResult>(ITransactionalActor actor, TxnRequest request, RetryPolicy? retry) =>
        retry is null ? SubmitWhileMigratingAsync<TResult>(actor, request) : retry.RunAsync(() => SubmitWhileMigratingAsync<TResult>(actor, request));

    /// <summary>
    /// Submits <paramref name="request"/>, and again while it fails only because an actor is moving (or Orleans could not
    /// deliver the call to an activation that was moving), with a short growing pause,
    /// until <see cref="MigrationRetryBound"/>: a migration is invisible to the caller unless it takes longer.
    /// </summary>
    private static async Task<TResult> SubmitWhileMigratingAsync<TResult>(ITransactionalActor actor, TxnRequest request)
    {
        var started = Environment.TickCount64;
        var pause = 2;
        while (true)
        {
            try
            {
                var response = await actor.StartTxn(request);
                return response.Result is null ? default! : (TResult)response.Result;
            }
            // Orleans also fails (never runs) a call it could not deliver while the actor's activation moved (UndeliveredCalls);
            // a rejection by a silo that is down is not retried here.
            catch (Exception exception) when ((exception is ActorMigratingException or TransactionAbortedException { Reason: AbortReason.ActorMigrating }
                    || UndeliveredCalls.WhileMoving(exception))
                && Environment.TickCount64 - started < (long)MigrationRetryBound.TotalMilliseconds)
            {
                await Task.Delay(pause);
                pause = Math.Min(pause * 2, 100);
            }
        }
    }
}
