namespace Snapper;

/// <summary>
/// <c>GetState</c> or <c>CallActor</c> was used with a context whose transaction is not running on this
/// actor: it already committed or aborted, or the context was never passed to this actor.
/// </summary>
[GenerateSerializer, Alias("snapper.not-active")]
public sealed class TransactionNotActiveException : SnapperException
{
    /// <summary>Creates the exception.</summary>
    public TransactionNotActiveException(long tid, string detail)
        : base($"Transaction {tid} is not active here: {detail}")
    {
        Tid = tid;
    }

    /// <summary>The transaction the context belongs to.</summary>
    [Id(0)] public long Tid { get; private set; }
}
