namespace Snapper.Pact;

/// <summary>
/// The token of the coordinator ring (thesis §3.3.2.1-2): whoever holds it may assign tids and form a batch.
/// It carries the next tid (from a range reserved at the silo's tid sequencer, so PACT and ACT tids never
/// collide). Each actor's prev_bid, the last batch emitted to that actor, is kept on the actor's schedule
/// (<see cref="Scheduling.ActorSchedule.LastEmittedBid"/>), which only the token holder reads and writes: one lookup
/// per actor in a batch instead of two.
/// </summary>
internal sealed class PactToken
{
    public long NextTid { get; set; }

    public long RangeEnd { get; set; }

    /// <summary>The token holder's scratch for grouping a batch into sub-batches (see <see cref="SubBatchBuilder"/>).</summary>
    public SubBatchBuilder SubBatches { get; } = new();
}
