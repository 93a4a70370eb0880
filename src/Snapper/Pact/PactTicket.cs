namespace Snapper.Pact;

/// <summary>What ordering gives a PACT: its tid and the batch it belongs to (bid = tid of the batch's first PACT).</summary>
internal readonly record struct PactTicket(long Tid, long Bid);
