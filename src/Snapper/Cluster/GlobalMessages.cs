namespace Snapper.Cluster;

/// <summary>What the master's ordering gives a global PACT: its global tid and global batch id (gbid = first gtid of the batch).</summary>
[GenerateSerializer, Immutable, Alias("snapper.global-ticket")]
internal readonly record struct GlobalTicket([property: Id(0)] long Gtid, [property: Id(1)] long Gbid);

/// <summary>One declared actor of one global PACT, as a worker schedules it.</summary>
[GenerateSerializer, Immutable, Alias("snapper.global-access")]
internal readonly record struct GlobalAccess([property: Id(0)] long Gtid, [property: Id(1)] GrainId Actor, [property: Id(2)] int Accesses);

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
}
