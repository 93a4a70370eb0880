namespace Snapper.Act;

/// <summary>A participant's answer to <see cref="IActParticipant.Prepare"/>.</summary>
[GenerateSerializer]
public enum PrepareVote
{
    /// <summary>The participant wrote and is prepared; it waits for the decision with its lock held.</summary>
    Prepared,

    /// <summary>The participant only read; it released its lock and needs no decision.</summary>
    ReadOnly,

    /// <summary>The participant cannot commit (unknown transaction, failed call, or timed out).</summary>
    No,
}

/// <summary>
/// A participant's vote, with what its schedule knows for the hybrid check (thesis §3.3.4.3): the smallest bid of
/// the PACT batches scheduled after the ACT on this actor (its part of the AfterSet), or -1 if none is yet.
/// </summary>
[GenerateSerializer, Immutable, Alias("snapper.prepare-result")]
public readonly record struct PrepareResult([property: Id(0)] PrepareVote Vote, [property: Id(1)] long MinAfterBid = -1);
