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
    /// Runs a PACT with declared accesses. PACT execution is not available yet: this always fails with
    /// <see cref="NotSupportedException"/> and never runs the transaction as an ACT instead.
    /// </summary>
    [OverloadResolutionPriority(1)]
    public static Task<TResult> StartTxn<TActor, TInput, TResult>(
        this TActor actor, Func<TxnContext, TInput, Task<TResult>> method, TInput input, ActorAccessInfo accessInfo)
        where TActor : ITransactionalActor
    {
        ArgumentNullException.ThrowIfNull(accessInfo);
        TransactionalMethod.NameOf(actor, method);
        return Task.FromException<TResult>(PactNotSupported());
    }

    /// <summary>
    /// Runs a PACT whose first method returns no result. PACT execution is not available yet: this always
    /// fails with <see cref="NotSupportedException"/> and never runs the transaction as an ACT instead.
    /// </summary>
    public static Task StartTxn<TActor, TInput>(
        this TActor actor, Func<TxnContext, TInput, Task> method, TInput input, ActorAccessInfo accessInfo)
        where TActor : ITransactionalActor
    {
        ArgumentNullException.ThrowIfNull(accessInfo);
        TransactionalMethod.NameOf(actor, method);
        return Task.FromException(PactNotSupported());
    }

    internal static NotSupportedException PactNotSupported() =>
        new("PACTs (StartTxn with ActorAccessInfo) are not supported yet; submit the transaction without access info to run it as an ACT.");
}
