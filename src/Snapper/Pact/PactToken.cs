namespace Snapper.Pact;

/// <summary>
/// The token of the coordinator ring (thesis §3.3.2.1-2): whoever holds it may assign tids and form a batch.
/// It carries the next tid (from a range reserved at the silo's tid sequencer, so PACT and ACT tids never
/// collide) and each actor's prev_bid, the last batch emitted to that actor.
/// </summary>
internal sealed class PactToken
{
    public long NextTid { get; set; }

    public long RangeEnd { get; set; }

    /// <summary>The last batch emitted to each actor. Entries of resolved batches are harmless: schedules treat them as done.</summary>
    public Dictionary<GrainId, long> PrevBid { get; } = new();
}
