using Snapper.Hybrid;
using Xunit;

namespace Snapper.Tests.Units;

/// <summary>The hybrid check and commit rule (thesis §3.3.4.3-4) as pure functions, case by case, without a silo.</summary>
public sealed class HybridCheckTests
{
    [Fact]
    public void An_act_that_depends_on_no_batch_passes() =>
        Assert.Equal(HybridVerdictKind.Pass, HybridCheck.Check(maxBeforeBid: -1, minAfterBid: 5, afterSetComplete: false, maxBeforeCommitted: false).Kind);

    [Fact]
    public void BeforeSet_overlapping_a_complete_AfterSet_aborts_for_serializability()
    {
        var verdict = HybridCheck.Check(maxBeforeBid: 7, minAfterBid: 7, afterSetComplete: true, maxBeforeCommitted: false);
        Assert.Equal(HybridVerdictKind.Abort, verdict.Kind);
        Assert.Equal(AbortReason.Serializability, verdict.Reason);
    }

    [Fact]
    public void An_incomplete_AfterSet_aborts_unless_max_BeforeSet_already_committed()
    {
        var pending = HybridCheck.Check(maxBeforeBid: 7, minAfterBid: -1, afterSetComplete: false, maxBeforeCommitted: false);
        Assert.Equal(AbortReason.SerializabilityIncompleteAfterSet, pending.Reason);

        var committed = HybridCheck.Check(maxBeforeBid: 7, minAfterBid: -1, afterSetComplete: false, maxBeforeCommitted: true);
        Assert.Equal(HybridVerdictKind.WaitForBatch, committed.Kind);
        Assert.Equal(7, committed.WaitForBid);
    }

    [Fact]
    public void A_passing_act_waits_for_max_BeforeSet()
    {
        var verdict = HybridCheck.Check(maxBeforeBid: 7, minAfterBid: 9, afterSetComplete: true, maxBeforeCommitted: false);
        Assert.Equal(HybridVerdictKind.WaitForBatch, verdict.Kind);
        Assert.Equal(7, verdict.WaitForBid);
    }

    [Theory]
    [InlineData(false, false, false)] // max(BS) aborted
    [InlineData(true, true, false)]   // an earlier batch it read was dropped by a cascading abort
    [InlineData(true, false, true)]
    public void After_the_wait_the_act_commits_only_if_every_batch_it_depends_on_committed(bool maxCommitted, bool anyAborted, bool passes)
    {
        var verdict = HybridCheck.AfterWait(minBeforeBid: 3, maxBeforeBid: 7, maxCommitted, anyAborted);
        Assert.Equal(passes ? HybridVerdictKind.Pass : HybridVerdictKind.Abort, verdict.Kind);
        if (!passes)
        {
            Assert.Equal(AbortReason.CascadingAbort, verdict.Reason);
        }
    }

    [Fact]
    public void AfterSet_parts_combine_to_the_smallest_bid_and_are_complete_only_if_every_part_is()
    {
        Assert.Equal((4L, false), HybridCheck.CombineAfterSets(-1, true, [(9L, true), (4L, true), (-1L, false)]));
        Assert.Equal((6L, true), HybridCheck.CombineAfterSets(6, true, [(-1L, true), (8L, true)]));
    }
}
