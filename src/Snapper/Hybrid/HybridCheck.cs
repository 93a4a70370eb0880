namespace Snapper.Hybrid;

/// <summary>
/// The hybrid serializability check (thesis §3.3.4.3, §4.2.4) as pure functions: what the first actor of an ACT decides
/// from the BeforeSet/AfterSet facts its calls and votes collected. No state, no waiting; the caller does what the
/// verdict says, and then applies the commit rule (§3.3.4.4): it waits for every uncommitted batch the ACT read from,
/// and aborts if one of them aborted.
/// </summary>
/// <remarks>
/// max(BS) is the largest PACT batch the ACT depends on (it read what that batch, or an earlier one, wrote); min(AS)
/// the smallest batch that waits for the ACT, both as <see cref="BatchPosition"/>s, so that batches of different workers
/// compare. The ACT is serializable with the batches if max(BS) &lt; min(AS). When an actor's part of the AfterSet is
/// still incomplete (no batch after the ACT there yet, and its silo may still emit a batch before max(BS)), a later batch
/// could still land below max(BS): the ACT passes then only if every batch up to max(BS) is already resolved (the
/// thesis's optimization; an aborted one is caught by the commit rule). Only a single silo can know that; in a cluster
/// an incomplete AfterSet aborts the ACT.
/// </remarks>
internal static class HybridCheck
{
    /// <summary>
    /// Folds the participants' parts of the AfterSet into the first actor's own: the smallest position after the ACT
    /// (none if no part has one), and whether every part is complete.
    /// </summary>
    public static (BatchPosition MinAfter, bool Complete) CombineAfterSets(BatchPosition ownMinAfter, bool ownComplete, IEnumerable<(BatchPosition MinAfter, bool Complete)> parts)
    {
        var (minAfter, complete) = (ownMinAfter, ownComplete);
        foreach (var (partMin, partComplete) in parts)
        {
            complete &= partComplete;
            if (!partMin.IsNone && (minAfter.IsNone || partMin < minAfter))
            {
                minAfter = partMin;
            }
        }

        return (minAfter, complete);
    }

    /// <summary>
    /// Whether an actor's part of the AfterSet is complete: it has a batch after the ACT, or every batch its silo emits
    /// from now on comes after <paramref name="frontier"/> (read before the schedule), which is at or after max(BS).
    /// </summary>
    public static bool IsAfterSetPartComplete(BatchPosition minAfter, BatchPosition frontier, BatchPosition maxBefore) =>
        !minAfter.IsNone || frontier >= maxBefore;

    /// <summary>The check, once every participant voted.</summary>
    /// <param name="maxBefore">max(BS), none if the ACT depends on no uncommitted batch.</param>
    /// <param name="minAfter">min(AS), none if no batch is scheduled after the ACT anywhere yet.</param>
    /// <param name="afterSetComplete">Whether every actor's part of the AfterSet is complete.</param>
    /// <param name="maxBeforeResolved">Whether batch max(BS) is known to be committed or aborted already.</param>
    public static HybridVerdict Check(BatchPosition maxBefore, BatchPosition minAfter, bool afterSetComplete, bool maxBeforeResolved)
    {
        if (maxBefore.IsNone)
        {
            return HybridVerdict.Pass;
        }

        if (afterSetComplete && !minAfter.IsNone && maxBefore >= minAfter)
        {
            return HybridVerdict.Abort(AbortReason.Serializability, $"it depends on PACT {maxBefore}, and {minAfter} depends on it.");
        }

        if (!afterSetComplete && !maxBeforeResolved)
        {
            return HybridVerdict.Abort(AbortReason.SerializabilityIncompleteAfterSet,
                $"it depends on PACT {maxBefore}, which has not committed, and not every actor it used has a batch scheduled after it yet.");
        }

        return HybridVerdict.Pass;
    }
}

/// <summary>What <see cref="HybridCheck"/> decided: pass, or abort with the reason.</summary>
internal readonly record struct HybridVerdict(bool Passed, AbortReason Reason, string? Why)
{
    public static HybridVerdict Pass { get; } = new(true, default, null);

    public static HybridVerdict Abort(AbortReason reason, string why) => new(false, reason, why);
}
