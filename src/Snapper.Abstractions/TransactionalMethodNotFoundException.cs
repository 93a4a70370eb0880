namespace Snapper;

/// <summary>
/// A transaction named a method that is not a transactional method of the actor: not declared on an
/// interface that derives from <see cref="ITransactionalActor"/>, or not of the shape
/// <c>Task M(TxnContext, TInput)</c> / <c>Task&lt;TResult&gt; M(TxnContext, TInput)</c>.
/// </summary>
[GenerateSerializer, Alias("snapper.method-not-found")]
public sealed class TransactionalMethodNotFoundException : SnapperException
{
    /// <summary>Creates the exception.</summary>
    public TransactionalMethodNotFoundException(string actorType, string method)
        : base($"'{method}' is not a transactional method of actor type {actorType}.")
    {
        ActorType = actorType;
        Method = method;
    }

    /// <summary>The actor class that was asked.</summary>
    [Id(0)] public string ActorType { get; private set; }

    /// <summary>The method name that was not found.</summary>
    [Id(1)] public string Method { get; private set; }
}
