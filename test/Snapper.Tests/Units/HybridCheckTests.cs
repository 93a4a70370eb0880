using Snapper.Hybrid;
using Xunit;

namespace Snapper.Tests.Units;

/// <summary>The hybrid check (thesis §3.3.4.3, §4.2.4) and the batch order it compares in, case by case, without a silo.</summary>
public sealed class HybridCheckTests
{
    private static BatchPosition B(long bid) => BatchPosition.Embedded(bid);

    [Fact]
    public void An_act_that_depends_on_no_batch_passes() =>
        Assert.True(HybridCheck.Check(BatchPosition.None, B(5), afterSetComplete: false, maxBeforeResolved: false).Passed);

    [Fact]
    public void BeforeSet_overlapping_a_complete_AfterSet_aborts_for_serializability()
    {
        var verdict = HybridCheck.Check(B(7), B(7), afterSetComplete: true, maxBeforeResolved: false);
        Assert.False(verdict.Passed);
        Assert.Equal(AbortReason.Serializability, verdict.Reason);
    }

    [Fact]
    public void An_incomplete_AfterSet_aborts_unless_max_BeforeSet_already_resolved()
    {
        var pending = HybridCheck.Check(B(7), BatchPosition.None, afterSetComplete: false, maxBeforeResolved: false);
        Assert.Equal(AbortReason.SerializabilityIncompleteAfterSet, pending.Reason);
        Assert.True(HybridCheck.Check(B(7), BatchPosition.None, afterSetComplete: false, maxBeforeResolved: true).Passed);
    }

    [Fact]
    public void BeforeSet_entirely_below_a_complete_AfterSet_passes() =>
        Assert.True(HybridCheck.Check(B(7), B(9), afterSetComplete: true, maxBeforeResolved: false).Passed);

    [Fact]
    public void AfterSet_parts_combine_to_the_smallest_position_and_are_complete_only_if_every_part_is()
    {
        Assert.Equal((B(4), false), HybridCheck.CombineAfterSets(BatchPosition.None, true, [(B(9), true), (B(4), true), (BatchPosition.None, false)]));
        Assert.Equal((B(6), true), HybridCheck.CombineAfterSets(B(6), true, [(BatchPosition.None, true), (B(8), true)]));
    }

    [Fact]
    public void An_AfterSet_part_without_a_batch_after_the_act_is_complete_once_emission_passed_max_BeforeSet()
    {
        Assert.True(HybridCheck.IsAfterSetPartComplete(B(3), frontier: B(1), maxBefore: B(2)));
        Assert.True(HybridCheck.IsAfterSetPartComplete(BatchPosition.None, frontier: B(2), maxBefore: B(2)));
        Assert.False(HybridCheck.IsAfterSetPartComplete(BatchPosition.None, frontier: B(1), maxBefore: B(2)));

        // In a cluster: a worker whose next local batch comes after another worker's max(BS) by the clock, and whose
        // last global part is the one before it, cannot still get a batch below it; one behind on global parts can.
        var maxBefore = BatchPosition.Local(lastGbid: 3, stamp: 100, worker: 1, bid: 40);
        Assert.True(HybridCheck.IsAfterSetPartComplete(BatchPosition.None, BatchPosition.Local(3, 101, 0, long.MaxValue), maxBefore));
        Assert.False(HybridCheck.IsAfterSetPartComplete(BatchPosition.None, BatchPosition.Local(2, 500, 0, long.MaxValue), maxBefore));
    }

    [Fact]
    public void No_position_is_below_every_batch_and_default_is_none()
    {
        Assert.True(default(BatchPosition).IsNone);
        Assert.True(BatchPosition.None < B(0));
        Assert.True(BatchPosition.None < BatchPosition.GlobalPart(0, 1, 0));
        Assert.Equal(0, BatchPosition.None.CompareTo(default));
    }

    [Fact]
    public void The_parts_of_one_global_batch_are_one_position_on_every_worker_whatever_their_local_bids()
    {
        var onWorker0 = BatchPosition.GlobalPart(gbid: 4, worker: 0, bid: 900);
        var onWorker1 = BatchPosition.GlobalPart(gbid: 4, worker: 1, bid: 12);
        Assert.Equal(0, onWorker0.CompareTo(onWorker1));

        // An ACT after the part on one worker and before it on the other: max(BS) = min(AS), a cycle.
        Assert.False(HybridCheck.Check(onWorker1, onWorker0, afterSetComplete: true, maxBeforeResolved: false).Passed);
        Assert.False(HybridCheck.Check(onWorker0, onWorker1, afterSetComplete: true, maxBeforeResolved: false).Passed);
    }

    [Fact]
    public void A_local_batch_sits_after_the_global_parts_its_worker_emitted_before_it_and_before_later_ones()
    {
        var global4 = BatchPosition.GlobalPart(4, 0, 100);
        var local = BatchPosition.Local(lastGbid: 4, stamp: 50, worker: 0, bid: 101);
        var global5 = BatchPosition.GlobalPart(5, 1, 7);
        Assert.True(global4 < local);
        Assert.True(local < global5);

        // Within a worker, local batches follow their bids (stamps increase with them).
        Assert.True(local < BatchPosition.Local(4, 51, 0, 102));

        // Of two workers' local batches after the same global part, the earlier stamp comes first.
        Assert.True(BatchPosition.Local(4, 60, 1, 3) < BatchPosition.Local(4, 70, 0, 103));
    }

    /// <summary>
    /// The cycle that checking each worker's bids and the gbids separately misses (see <see cref="BatchPosition"/>):
    /// T2 runs after local batch B of worker 0 and before local batch C of worker 1; T runs after C and before D of
    /// worker 0, which comes before B there (B → T2 → C → T → D → B). Each ACT on its own looks fine per worker (one
    /// batch before it on one worker, one after it on the other, no global batch at all), but in one order of all batches
    /// at least one of the two checks fails, whatever the stamps.
    /// </summary>
    [Theory]
    [InlineData(10, 20, 30)]
    [InlineData(30, 20, 10)]
    [InlineData(20, 10, 30)]
    [InlineData(20, 20, 20)]
    public void A_cycle_through_two_acts_and_local_batches_of_two_workers_fails_one_of_their_checks(long stampD, long stampB, long stampC)
    {
        // D before B on worker 0: D has the smaller bid, and its stamp is not larger.
        var d = BatchPosition.Local(-1, Math.Min(stampD, stampB), 0, 1);
        var b = BatchPosition.Local(-1, Math.Max(stampD, stampB) + 1, 0, 2);
        var c = BatchPosition.Local(-1, stampC, 1, 1);

        var t2Passes = HybridCheck.Check(maxBefore: b, minAfter: c, afterSetComplete: true, maxBeforeResolved: false).Passed;
        var tPasses = HybridCheck.Check(maxBefore: c, minAfter: d, afterSetComplete: true, maxBeforeResolved: false).Passed;
        Assert.False(t2Passes && tPasses);
    }
}
