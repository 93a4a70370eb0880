namespace Snapper;

/// <summary>
/// The transaction's outcome is unknown to Snapper: it was decided, but writing the decision to the write-ahead log
/// failed or did not finish in time, so the record may or may not be on disk. After the silo restarts, recovery
/// settles it: committed if the record reached the disk, aborted otherwise. Unlike
/// <see cref="TransactionAbortedException"/> this does not say that nothing of the transaction remains; read the
/// state afterwards (after the restart) before retrying something that must not happen twice.
/// </summary>
[GenerateSerializer, Alias("snapper.in-doubt")]
public sealed class TransactionInDoubtException : SnapperException
{
    /// <summary>Creates the exception.</summary>
    public TransactionInDoubtException(long tid, string message, Exception? innerException = null)
        : base($"Transaction {tid} is in doubt: {message}", innerException)
    {
        Tid = tid;
    }

    /// <summary>The id of the transaction whose outcome is unknown.</summary>
    [Id(0)] public long Tid { get; private set; }
}
