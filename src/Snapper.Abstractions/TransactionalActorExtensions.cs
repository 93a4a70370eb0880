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
    /// <exception cref="TransactionAbortedException">The transaction (its last attempt) aborted; nothing of it remains.</exception>
    // A method returning Task<T> also converts to the Task overload, which C# would otherwise prefer.
    [OverloadResolutionPriority(1)]
    public static async Task<TResult> StartTxn<TActor, TInput, TResult>(
        this TActor actor, Func<TxnContext, TInput, Task<TResult>> method, TInput input, RetryPolicy? retry = null)
        where TActor : ITransactionalActor =>
        await Submit<TResult>(actor, new TxnRequest(TransactionalMethod.NameOf(actor, method), input), retry);

    /// <summary>Runs an ACT whose first method, returning no result, is <paramref name="method"/> on <paramref name="actor"/>; see the overload with a result.</summary>
    /// <exception cref="TransactionAbortedException">The transaction (its last attempt) aborted; nothing of it remains.</exception>
    public static async Task StartTxn<TActor, TInput>(
        this TActor actor, Func<TxnContext, TInput, Task> method, TInput input, RetryPolicy? retry = null)
        where TActor : ITransactionalActor =>
        await Submit<object?>(actor, new TxnRequest(TransactionalMethod.NameOf(actor, method), input), retry);

    /// <summary>
    /// Runs a PACT (thesis §3.3.2): a transaction that declares up front every actor it calls and how many times,
    /// including the first actor's own call. PACTs are ordered before they run and never abort on conflicts.
    /// </summary>
    /// <exception cref="TransactionAbortedException">
    /// The transaction aborted: user code threw, it called an actor it did not declare (<see cref="AbortReason.UndeclaredAccess"/>),
    /// or a PACT of its batch or an earlier uncommitted batch failed (<see cref="AbortReason.CascadingAbort"/>). Nothing of it remains.
    /// </exception>
    [OverloadResolutionPriority(1)]
    public static async Task<TResult> StartTxn<TActor, TInput, TResult>(
        this TActor actor, Func<TxnContext, TInput, Task<TResult>> method, TInput input, ActorAccessInfo accessInfo, RetryPolicy? retry = null)
        where TActor : ITransactionalActor
    {
        ArgumentNullException.ThrowIfNull(accessInfo);
        return await Submit<TResult>(actor, new TxnRequest(TransactionalMethod.NameOf(actor, method), input, accessInfo), retry);
    }

    /// <summary>Runs a PACT whose first method returns no result; see the overload with a result.</summary>
    public static async Task StartTxn<TActor, TInput>(
        this TActor actor, Func<TxnContext, TInput, Task> method, TInput input, ActorAccessInfo accessInfo, RetryPolicy? retry = null)
        where TActor : ITransactionalActor
    {
        ArgumentNullException.ThrowIfNull(accessInfo);
        await Submit<object?>(actor, new TxnRequest(TransactionalMethod.NameOf(actor, method), input, accessInfo), retry);
    }

    // Each attempt is a call of its own to the first actor, which gives it a new tid.
    private static Task<TResult> Submit<TResult>(ITransactionalActor actor, TxnRequest request, RetryPolicy? retry)
    {
        async Task<TResult> Once()
        {
            var response = await actor.StartTxn(request);
            return response.Result is null ? default! : (TResult)response.Result;
        }

        return retry is null ? Once() : retry.RunAsync(Once);
    }
}
