using Snapper.Hosting;
using Snapper.Pact;
using Snapper.Scheduling;
using Xunit;

namespace Snapper.Tests.Units;

/// <summary>One actor's local schedule without a silo: batch chain, PACT turns, completion, commit, cascading abort, ACT slots.</summary>
public sealed class ActorScheduleTests
{
    private sealed class Batches : IBatchStatus, IBatchCompletionSink
    {
        public long ResolvedBid { get; set; } = -1;

        public Snapper.Hybrid.BatchPosition EmissionFrontier(Snapper.Hybrid.BatchPosition atLeast) => default;

        public List<long> Completed { get; } = new();

        public Task<bool> WhenResolvedAsync(long bid) => Task.FromResult(bid <= ResolvedBid);

        public bool IsResolved(Snapper.Hybrid.BatchPosition position) => position.Bid <= ResolvedBid;

        public void SubBatchCompleted(long bid, GrainId actor, object? version, long seq) => Completed.Add(bid);
    }

    private static readonly GrainId Actor = GrainId.Create("unit", "a");
    private readonly Batches _batches = new();

    private ActorSchedule Create() => new(Actor, _batches, _batches, HybridScheduling.SerializabilityCheck);

    [Fact]
    public async Task Pacts_of_a_batch_run_in_tid_order_and_the_batch_completes_when_the_last_one_finished()
    {
        var schedule = Create();
        schedule.Deliver(10, -1, [(11, 1), (10, 1)]);

        var first = schedule.EnterAsync(10);
        var second = schedule.EnterAsync(11);
        Assert.True(first.IsCompleted);
        Assert.False(second.IsCompleted);

        schedule.Exit(10);
        await second;
        Assert.Empty(_batches.Completed);
        schedule.Exit(11);
        Assert.Equal([10L], _batches.Completed);
    }

    [Fact]
    public async Task A_batch_starts_only_after_the_batch_its_prev_bid_names_completed_here()
    {
        var schedule = Create();
        schedule.Deliver(20, prevBid: 10, [(20, 1)]);
        var later = schedule.EnterAsync(20);
        schedule.Deliver(10, prevBid: -1, [(10, 1)]);
        Assert.False(later.IsCompleted);

        await schedule.EnterAsync(10);
        schedule.Exit(10);
        await later;
        schedule.Exit(20);
        Assert.Equal([10L, 20L], _batches.Completed);
    }

    [Fact]
    public async Task Calls_beyond_the_declared_accesses_and_undeclared_pacts_are_refused()
    {
        var schedule = Create();
        schedule.Deliver(10, -1, [(10, 1)]);
        await schedule.EnterAsync(10);

        Assert.Equal(AbortReason.UndeclaredAccess, Assert.Throws<TransactionAbortedException>(() => { _ = schedule.EnterAsync(10); }).Reason);
        Assert.Equal(AbortReason.UndeclaredAccess, Assert.Throws<TransactionAbortedException>(() => { _ = schedule.EnterAsync(99); }).Reason);
    }

    [Fact]
    public async Task Declared_accesses_never_made_are_released_when_the_first_method_returns()
    {
        var schedule = Create();
        schedule.Deliver(10, -1, [(10, 2)]);
        await schedule.EnterAsync(10);
        schedule.Exit(10);
        Assert.Empty(_batches.Completed); // one of two declared accesses made

        Assert.True(schedule.Finish(10));
        Assert.Equal([10L], _batches.Completed);
    }

    [Fact]
    public async Task A_cascading_abort_fails_the_waiting_pacts_of_dropped_batches_with_their_reason()
    {
        var schedule = Create();
        schedule.Deliver(10, -1, [(10, 1)]);
        schedule.Deliver(20, 10, [(20, 1)]);
        await schedule.EnterAsync(10);
        var waiting = schedule.EnterAsync(20);

        schedule.AbortAfter(-1, (bid, tid) => new TransactionAbortedException(tid, AbortReason.CascadingAbort, $"batch {bid} dropped"));

        var abort = await Assert.ThrowsAsync<TransactionAbortedException>(() => waiting);
        Assert.Equal(20, abort.Tid);
        Assert.Equal(0, schedule.UncommittedBatchCount);
    }

    [Fact]
    public async Task An_act_enters_after_the_batch_before_it_completed_and_a_later_batch_waits_for_the_act()
    {
        var schedule = Create();
        schedule.Deliver(10, -1, [(10, 1)]);
        await schedule.EnterAsync(10);

        var act = schedule.EnterActAsync(500, TimeSpan.FromMinutes(1));
        Assert.False(act.IsCompleted);
        schedule.Exit(10);
        await act;
        Assert.Equal((Snapper.Hybrid.BatchPosition.Embedded(10), 10L), schedule.Before(500));

        schedule.Deliver(20, 10, [(20, 1)]);
        var batchAfter = schedule.EnterAsync(20);
        Assert.Equal(Snapper.Hybrid.BatchPosition.Embedded(20), schedule.MinAfter(500));
        Assert.False(batchAfter.IsCompleted);

        schedule.ExitAct(500, maxBefore: Snapper.Hybrid.BatchPosition.Embedded(10));
        await batchAfter;
    }

    [Fact]
    public void Committing_a_batch_forgets_its_pacts()
    {
        var schedule = Create();
        schedule.Deliver(10, -1, [(10, 1)]);
        _ = schedule.EnterAsync(10);
        schedule.Exit(10);

        schedule.Commit(10);

        Assert.Equal(0, schedule.UncommittedBatchCount);
        Assert.Throws<TransactionAbortedException>(() => { _ = schedule.EnterAsync(10); });
    }
}
