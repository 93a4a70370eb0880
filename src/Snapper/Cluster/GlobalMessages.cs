namespace Snapper.Cluster;

/// <summary>What the master's ordering gives a global PACT: its global tid and global batch id (gbid = first gtid of the batch).</summary>
[GenerateSerializer, Immutable, Alias("snapper.global-ticket")]
internal readonly record struct GlobalTicket([property: Id(0)] long Gtid, [property: Id(1)] long Gbid);

/// <summary>One declared actor of one global PACT, as a worker schedules it.</summary>
[GenerateSerializer, Immutable, Alias("snapper.global-access")]
internal readonly record struct GlobalAccess([property: Id(0)] long Gtid, [property: Id(1)] GrainId Actor, [property: Id(2)] int Accesses)
{
    /// <summary>The keys the PACT declared on the actor; null if it declared the actor whole.</summary>
    [Id(3)]
    public object[]? Keys { get; init; }
}

/// <summary>
/// A worker's part of a global batch (thesis §4.2.3.1): the global PACTs' accesses to its actors, and the gbid of the
/// global batch sent to it before this one (-1: none since the master started), which it must have merged into its local
/// order first. The master sends a worker its sub-batches one at a time, in gbid order.
/// </summary>
[GenerateSerializer, Immutable, Alias("snapper.global-sub-batch")]
internal sealed record GlobalSubBatch([property: Id(0)] long Gbid, [property: Id(1)] long PrevGbid, [property: Id(2)] GlobalAccess[] Accesses)
{
    /// <summary>
    /// The master's incarnation that emitted it. A worker votes for a global part ahead of an earlier undecided one
    /// (the shortcut) only within one incarnation: only that master commits global batches in gbid order, so a
    /// restarted master could otherwise commit a later part whose earlier one its predecessor left undecided.
    /// </summary>
    [Id(3)]
    public Guid MasterEpoch { get; init; }

    /// <summary>
    /// Global batches the master aborted that this worker may not have heard of yet: it drops its parts of them before it
    /// merges this sub-batch. The abort is also sent on its own, but that message may be slower than this one, and a worker
    /// that merged this part after an aborted one would run it on the aborted writes and could vote for it by the shortcut.
    /// </summary>
    [Id(4)]
    public GlobalAbort[] AbortedBefore { get; init; } = [];
}

/// <summary>The master aborted global batches <paramref name="From"/> to <paramref name="To"/> for <paramref name="Reason"/>.</summary>
[GenerateSerializer, Immutable, Alias("snapper.global-abort")]
internal sealed record GlobalAbort([property: Id(0)] long From, [property: Id(1)] long To, [property: Id(2)] TransactionAbortedException Reason);
