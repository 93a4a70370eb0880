namespace Snapper.Actors;

/// <summary>
/// One method call inside a running transaction, sent by <c>CallActor</c>, or, <paramref name="Internal"/>, by Snapper
/// itself to one of the methods it keeps apart from the actor's transactional interfaces (a key-value actor's dependency
/// endpoints): user code can name only the former. <paramref name="Sender"/> proves that a silo sent it.
/// </summary>
[GenerateSerializer, Immutable, Alias("snapper.call-request")]
internal sealed record CallRequest(
    [property: Id(4)] SiloStamp Sender,
    [property: Id(0)] TxnContext Context,
    [property: Id(1)] string Method,
    [property: Id(2)] object? Input,
    [property: Id(3)] bool Internal = false);

/// <summary>
/// What a call returns to its caller: the result, every actor the call touched (itself and, transitively,
/// the actors it called), which the first actor needs for 2PC (thesis §3.3.3.3), and the abort, if the
/// call failed. A failed call still reports its participants so that the first actor can release them.
/// <c>MaxBefore</c> is the largest PACT batch the transaction was found to depend on in the actors the call reached
/// (none for none), for the hybrid serializability check (thesis §3.3.4.3); <c>ReadUncommitted</c>, whether one of them
/// read from a batch that had not committed yet (see <c>ActorTransaction.ReadUncommitted</c>).
/// </summary>
[GenerateSerializer, Immutable, Alias("snapper.call-response")]
internal sealed record CallResponse(
    [property: Id(0)] object? Result,
    [property: Id(1)] GrainId[] Participants,
    [property: Id(2)] TransactionAbortedException? Failure,
    [property: Id(5)] Hybrid.BatchPosition MaxBefore = default,
    [property: Id(6)] bool ReadUncommitted = false)
{
    /// <summary>
    /// What every PACT call that ran and returned nothing answers (a PACT's callee reports no participants: its actors are
    /// declared). One shared instance: the record is immutable and its empty array cannot change, and most PACT methods
    /// return nothing (SmallBank's, for one), so a call saves an allocation.
    /// </summary>
    public static CallResponse PactDone { get; } = new(null, [], null);
}
