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
