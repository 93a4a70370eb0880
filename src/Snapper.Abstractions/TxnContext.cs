namespace Snapper;

/// <summary>
/// The read-only context of one transaction, created by Snapper when the transaction starts and passed
/// to every transactional method, <c>GetState</c> and <c>CallActor</c> call it makes.
/// </summary>
/// <param name="Tid">The transaction id; unique in the cluster. For ACTs a smaller tid is an older transaction (wait-die).</param>
/// <param name="Mode">Whether the transaction runs as an ACT or a PACT.</param>
/// <param name="Root">The first actor of the transaction, which coordinates its commit.</param>
[GenerateSerializer, Immutable, Alias("snapper.ctx")]
public sealed record TxnContext(
    [property: Id(0)] long Tid,
    [property: Id(1)] TxnMode Mode,
    [property: Id(2)] GrainId Root);
