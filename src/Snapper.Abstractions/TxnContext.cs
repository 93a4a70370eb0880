namespace Snapper;

/// <summary>
/// The read-only context of one transaction, created by Snapper when the transaction starts and passed
/// to every transactional method, <c>GetState</c> and <c>CallActor</c> call it makes.
/// </summary>
/// <remarks>Only Snapper creates contexts (the constructor is internal): a transaction starts through <c>StartTxn</c>.</remarks>
[GenerateSerializer, Immutable, Alias("snapper.ctx")]
public sealed record TxnContext
{
    internal TxnContext(long tid, TxnMode mode, GrainId root)
    {
        Tid = tid;
        Mode = mode;
        Root = root;
    }

    /// <summary>The transaction id; unique in the cluster. For ACTs a smaller tid is an older transaction (wait-die).</summary>
    [Id(0)] public long Tid { get; private init; }

    /// <summary>Whether the transaction runs as an ACT or a PACT.</summary>
    [Id(1)] public TxnMode Mode { get; private init; }

    /// <summary>The first actor of the transaction, which coordinates its commit.</summary>
    [Id(2)] public GrainId Root { get; private init; }

    /// <summary>
    /// For a PACT spanning workers of a cluster, its global batch id (positive: ids come from a clock-floored sequence); 0
    /// otherwise. Each worker maps it to the local batch its part runs in (thesis §4.2.3.2).
    /// </summary>
    [Id(3)] internal long GlobalBid { get; init; }

    /// <summary>For a PACT spanning workers, the workers its declaration touches (bit k: worker k), so a worker it does not touch refuses a call at once.</summary>
    [Id(4)] internal long GlobalWorkers { get; init; }
}
