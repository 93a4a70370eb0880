namespace Snapper.Hybrid;

/// <summary>
/// The hybrid serializability check (thesis §3.3.4.3) and commit rule (§3.3.4.4) as pure functions: what the first
/// actor of an ACT decides from the BeforeSet/AfterSet facts its calls and votes collected. No state, no waiting; the
/// caller does what the verdict says.
/// </summary>
/// <remarks>
/// max(BS) is the largest PACT batch the ACT depends on (it read what that batch, or an earlier one, wrote); min(AS)
/// the smallest batch that waits for the ACT. The ACT is serializable with the batches if max(BS) &lt; min(AS). When
/// an actor's part of the AfterSet is still incomplete (no batch after the ACT there yet, and batches up to max(BS)
/// not all delivered), a later batch could still land below max(BS): the ACT passes then only if batch max(BS)
/// already committed (the thesis's optimization). Passing, it commits only after batch max(BS) committed, and aborts
/// if any batch it depends on aborted.
/// </remarks>
internal static class HybridCheck
{
    /// <summary>
    /// Folds the participants' parts of the AfterSet into the first actor's own: the smallest bid after the ACT (-1:
    /// none), and whether every part is complete.
    /// </summary>
    public static (long MinAfterBid, bool Complete) CombineAfterSets(long ownMinAfterBid, bool ownComplete, IEnumerable<(long MinAfterBid, bool Complete)> parts)
    {
        var (minAfter, complete) = (ownMinAfterBid, ownComplete);
        foreach (var (partMin, partComplete) in parts)
        {
            complete &= partComplete;
            if (partMin >= 0 && (minAfter < 0 || partMin < minAfter))
            {
                minAfter = partMin;
            }
        }

        return (minAfter, complete);
    }

    /// <summary>The check, once every participant voted.</summary>
    /// <param name="maxBeforeBid">max(BS), -1 if the ACT depends on no batch.</param>
    /// <param name="minAfterBid">min(AS), -1 if no batch is scheduled after the ACT anywhere yet.</param>
    /// <param name="afterSetComplete">Whether every actor's part of the AfterSet is complete.</param>
    /// <param name="maxBeforeCommitted">Whether batch max(BS) has committed already.</param>
    public static HybridVerdict Check(long maxBeforeBid, long minAfterBid, bool afterSetComplete, bool maxBeforeCommitted)
    {
        if (maxBeforeBid < 0)
        {
            return HybridVerdict.Pass;
        }

        if (afterSetComplete && minAfterBid >= 0 && maxBeforeBid >= minAfterBid)
        {
            return HybridVerdict.Abort(AbortReason.Serializability, $"it depends on PACT batch {maxBeforeBid}, and batch {minAfterBid} depends on it.");
        }

        if (!afterSetComplete && !maxBeforeCommitted)
        {
            return HybridVerdict.Abort(AbortReason.SerializabilityIncompleteAfterSet,
                $"it depends on PACT batch {maxBeforeBid}, which has not committed, and not every actor it used has a batch scheduled after it yet.");
        }

        return HybridVerdict.WaitFor(maxBeforeBid);
    }

    /// <summary>
    /// The commit rule, once batch max(BS) is resolved: the ACT commits only if that batch committed and no batch from
    /// its smallest before-bid to max(BS) aborted. Waiting for max(BS) resolves every earlier batch (they commit in bid
    /// order) but does not prove they committed: a cascading abort can drop a batch the ACT read on one actor while a
    /// batch emitted after that abort becomes max(BS) elsewhere and commits.
    /// </summary>
    public static HybridVerdict AfterWait(long minBeforeBid, long maxBeforeBid, bool maxBeforeCommitted, bool anyAbortedBetween)
    {
        if (!maxBeforeCommitted)
        {
            return HybridVerdict.Abort(AbortReason.CascadingAbort, $"PACT batch {maxBeforeBid}, which it depends on, aborted.");
        }

        return anyAbortedBetween
            ? HybridVerdict.Abort(AbortReason.CascadingAbort, $"a PACT batch it depends on (between {minBeforeBid} and {maxBeforeBid}) aborted.")
            : HybridVerdict.Pass;
    }
}

/// <summary>What <see cref="HybridCheck"/> decided: pass, abort (with the reason), or wait for a batch to resolve first.</summary>
internal readonly record struct HybridVerdict(HybridVerdictKind Kind, AbortReason Reason, string? Why, long WaitForBid)
{
    public static HybridVerdict Pass { get; } = new(HybridVerdictKind.Pass, default, null, -1);

    public static HybridVerdict Abort(AbortReason reason, string why) => new(HybridVerdictKind.Abort, reason, why, -1);

    public static HybridVerdict WaitFor(long bid) => new(HybridVerdictKind.WaitForBatch, default, null, bid);
}

/// <summary>The kinds of <see cref="HybridVerdict"/>.</summary>
internal enum HybridVerdictKind
{
    /// <summary>Nothing stands in the way of the commit.</summary>
    Pass,

    /// <summary>Wait until <see cref="HybridVerdict.WaitForBid"/> is resolved, then apply <see cref="HybridCheck.AfterWait"/>.</summary>
    WaitForBatch,

    /// <summary>The ACT must abort.</summary>
    Abort,
}
