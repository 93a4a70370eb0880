namespace Snapper;

/// <summary>
/// Marks a grain interface as transactional. Derive your actor interface from it (and from an Orleans key
/// interface such as <see cref="IGrainWithIntegerKey"/>); every method of that interface of the shape
/// <c>Task M(TxnContext ctx, TInput input)</c> or <c>Task&lt;TResult&gt; M(TxnContext ctx, TInput input)</c>
/// is a transactional method that <c>StartTxn</c> and <c>CallActor</c> can reach. Methods of other
/// interfaces are never reached through Snapper.
/// </summary>
/// <remarks>
/// <c>StartTxn</c> is the one entry point of Snapper a client may call (calls inside a transaction and two-phase commit
/// go through internal interfaces that refuse callers outside the silo). Clients use the typed
/// <see cref="TransactionalActorExtensions.StartTxn{TActor, TInput, TResult}(TActor, Func{TxnContext, TInput, Task{TResult}}, TInput, RetryPolicy)"/>
/// instead of calling them directly.
/// </remarks>
public interface ITransactionalActor : IGrain
{
    /// <summary>Runs a transaction whose first method is on this actor and returns its result once committed.</summary>
    /// <exception cref="TransactionAbortedException">The transaction aborted; nothing of it remains.</exception>
    /// <exception cref="TransactionalMethodNotFoundException">The method is not a transactional method of this actor.</exception>
    /// <exception cref="TransactionInputException">The input does not fit the method.</exception>
    Task<TxnResponse> StartTxn(TxnRequest request);
}
