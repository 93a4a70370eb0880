using System.Runtime.CompilerServices;

namespace Snapper;

/// <summary>
/// Client-side submission of transactions (thesis Fig. 3.2), typed: the first method is named by its method
/// group on the actor reference, as in <c>account.StartTxn(account.Transfer, input)</c>, so the compiler
/// checks its name, input and result types.
/// </summary>
public static class TransactionalActorExtensions
{
    /// <summary>Runs an ACT whose first method is <paramref name="method"/> on <paramref name="actor"/>.</summary>
    /// <exception cref="TransactionAbortedException">The transaction aborted; nothing of it remains.</exception>
    // A method returning Task<T> also converts to the Task overload, which C# would otherwise prefer.
    [OverloadResolutionPriority(1)]
    public static async Task<TResult> StartTxn<TActor, TInput, TResult>(
        this TActor actor, Func<TxnContext, TInput, Task<TResult>> method, TInput input)
        where TActor : ITransactionalActor
    {
        var name = TransactionalMethod.NameOf(actor, method);
        var response = await actor.StartTxn(new TxnRequest(name, input));
        return response.Result is null ? default! : (TResult)response.Result;
    }

    /// <summary>Runs an ACT whose first method, returning no result, is <paramref name="method"/> on <paramref name="actor"/>.</summary>
    /// <exception cref="TransactionAbortedException">The transaction aborted; nothing of it remains.</exception>
    public static async Task StartTxn<TActor, TInput>(
        this TActor actor, Func<TxnContext, TInput, Task> method, TInput input)
        where TActor : ITransactionalActor
    {
        var name = TransactionalMethod.NameOf(actor, method);
        await actor.StartTxn(new TxnRequest(name, input));
    }

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
        this TActor actor, Func<TxnContext, TInput, Task<TResult>> method, TInput input, ActorAccessInfo accessInfo)
        where TActor : ITransactionalActor
    {
        ArgumentNullException.ThrowIfNull(accessInfo);
        var name = TransactionalMethod.NameOf(actor, method);
        var response = await actor.StartTxn(new TxnRequest(name, input, accessInfo));
        return response.Result is null ? default! : (TResult)response.Result;
    }

    /// <summary>Runs a PACT whose first method returns no result; see the overload with a result.</summary>
    public static async Task StartTxn<TActor, TInput>(
        this TActor actor, Func<TxnContext, TInput, Task> method, TInput input, ActorAccessInfo accessInfo)
        where TActor : ITransactionalActor
    {
        ArgumentNullException.ThrowIfNull(accessInfo);
        var name = TransactionalMethod.NameOf(actor, method);
        await actor.StartTxn(new TxnRequest(name, input, accessInfo));
    }
}
