namespace Snapper;

/// <summary>A client's request to run a transaction: the first method, its input and, for a PACT, the declared accesses.</summary>
/// <remarks>
/// The request and response types are <c>[Immutable]</c> to Orleans, so a call inside a silo does not deep-copy
/// them (and a grain reference needs no copier for them, which Orleans otherwise builds by reflection for every
/// reference). Snapper copies the input and the result itself where they cross from one actor to another, so
/// actors never share a mutable object.
/// </remarks>
/// <param name="Method">The name of a transactional method of the first actor.</param>
/// <param name="Input">The method's input.</param>
/// <param name="AccessInfo">The declared actor accesses for a PACT; null for an ACT.</param>
[GenerateSerializer, Immutable, Alias("snapper.txn-request")]
public sealed record TxnRequest(
    [property: Id(0)] string Method,
    [property: Id(1)] object? Input,
    [property: Id(2)] ActorAccessInfo? AccessInfo = null);

/// <summary>The result of a committed transaction: what its first method returned.</summary>
[GenerateSerializer, Immutable, Alias("snapper.txn-response")]
public sealed record TxnResponse([property: Id(0)] object? Result);

/// <summary>One method call inside a running transaction, sent by <c>CallActor</c>.</summary>
[GenerateSerializer, Immutable, Alias("snapper.call-request")]
public sealed record CallRequest(
    [property: Id(0)] TxnContext Context,
    [property: Id(1)] string Method,
    [property: Id(2)] object? Input);

/// <summary>
/// What a call returns to its caller: the result, every actor the call touched (itself and, transitively,
/// the actors it called), which the first actor needs for 2PC (thesis §3.3.3.3), and the abort, if the
/// call failed. A failed call still reports its participants so that the first actor can release them.
/// <c>MaxBeforeBid</c> and <c>MinBeforeBid</c> are the largest and smallest PACT batch ids the transaction was found
/// to depend on in the actors the call reached (-1 for none), for the hybrid serializability check and commit rule
/// (thesis §3.3.4.3-4).
/// </summary>
[GenerateSerializer, Immutable, Alias("snapper.call-response")]
public sealed record CallResponse(
    [property: Id(0)] object? Result,
    [property: Id(1)] GrainId[] Participants,
    [property: Id(2)] TransactionAbortedException? Failure,
    [property: Id(3)] long MaxBeforeBid = -1,
    [property: Id(4)] long MinBeforeBid = -1);
