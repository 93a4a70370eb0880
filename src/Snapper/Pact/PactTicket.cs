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
    /// For a local PACT, the schedules of the actors it declared when it was emitted, in declaration order: it is finished
    /// by them, without looking each one up again, whatever its caller did to the declaration since. Null for a global one.
    /// </summary>
    public Scheduling.ActorSchedule[]? Schedules { get; init; }

    /// <summary>For a global PACT, the copy of its declaration the master ordered; it is finished by it.</summary>
    public ActorAccessInfo? GlobalDeclaration { get; init; }
}
