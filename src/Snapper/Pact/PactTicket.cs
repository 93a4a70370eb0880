namespace Snapper.Pact;

/// <summary>What ordering gives a PACT: its tid and the batch it belongs to (bid = tid of the batch's first PACT).</summary>
internal readonly record struct PactTicket(long Tid, long Bid)
{
    /// <summary>For a global PACT, its global batch (else -1); <see cref="Bid"/> is then the local bid of its part on this worker.</summary>
    public long Gbid { get; init; } = -1;

    /// <summary>For a global PACT, the workers its declaration touches (bit k: worker k).</summary>
    public long Workers { get; init; }
}
