namespace Snapper.Hosting;

/// <summary>How ACTs and PACT batches share an actor's schedule (thesis §3.3.4).</summary>
public enum HybridScheduling
{
    /// <summary>
    /// The thesis's hybrid scheduling (§3.3.4.1) with its serializability check (§3.3.4.3): an ACT runs on an actor
    /// once the batch before it there has completed, a batch starts once the ACTs before it ended; at commit the
    /// ACT's first actor checks max(BeforeSet) &lt; min(AfterSet) (with the incomplete-AfterSet rule and its
    /// optimization) and waits until batch max(BeforeSet) committed. ACTs may abort with
    /// <see cref="AbortReason.Serializability"/> or <see cref="AbortReason.SerializabilityIncompleteAfterSet"/>.
    /// </summary>
    SerializabilityCheck,

    /// <summary>
    /// A simpler, stricter rule: an ACT enters an actor only when no batch is uncommitted there, and a batch starts
    /// only when no ACT is inside. Every conflict edge then follows commit order, so no check is needed, but ACTs
    /// wait longer (for commit rather than completion) and give way more often.
    /// </summary>
    CommittedBatchesOnly,
}
