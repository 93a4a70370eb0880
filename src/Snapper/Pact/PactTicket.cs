namespace Snapper.Pact;

/// <summary>What ordering gives a PACT: its tid and the batch it belongs to (bid = tid of the batch's first PACT).</summary>
/// <remarks>
/// Every PACT's ticket is copied into its submission's task and its first actor's state machine, so what only a global
/// PACT needs lives in one object of its own (<see cref="Global"/>), not in fields every local ticket would carry.
/// </remarks>
internal readonly record struct PactTicket(long Tid, long Bid)
{
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

    /// <summary>For a global PACT, what the master ordered (else null).</summary>
    public GlobalPlace? Global { get; init; }

    /// <summary>For a global PACT, its global batch (else -1); <see cref="Bid"/> is then the local bid of its part on this worker.</summary>
    public long Gbid => Global?.Gbid ?? -1;

    /// <summary>For a global PACT, the workers its declaration touches (bit k: worker k); else 0.</summary>
    public long Workers => Global?.Workers ?? 0;
}

/// <summary>
/// A global PACT's place in the master's order: its global batch, the workers it touches, and the copy of its declaration
/// the master ordered, by which it is finished.
/// </summary>
internal sealed record GlobalPlace(long Gbid, long Workers, ActorAccessInfo Declaration);
