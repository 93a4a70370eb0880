namespace Snapper.Pact;

/// <summary>What ordering gives a PACT: its tid and the batch it belongs to (bid = tid of the batch's first PACT).</summary>
internal readonly record struct PactTicket(long Tid, long Bid)
{
    /// <summary>For a global PACT, its global batch (else -1); <see cref="Bid"/> is then the local bid of its part on this worker.</summary>
    public long Gbid { get; init; } = -1;

    /// <summary>For a global PACT, the workers its declaration touches (bit k: worker k).</summary>
    public long Workers { get; init; }

    /// <summary>
    /// The outcome of the ticket's batch, for a local PACT (null for a global one, whose part is found by its bid): its
    /// first actor awaits it without taking the ordering lock, which the token holder keeps while it emits a batch.
    /// </summary>
    public Task<SnapperException?>? Outcome { get; init; }

    /// <summary>
    /// For a local PACT, the schedules of the actors it declares (see <see cref="PendingPact.Schedules"/>), so that finishing
    /// it does not look each one up again; null for a global one, or for one whose declaration changed after it was submitted.
    /// </summary>
    public Scheduling.ActorSchedule[]? Schedules { get; init; }
}
