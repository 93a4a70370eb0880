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

        public void SubBatchCompleted(long bid, GrainId actor, CompletedVersion version) => Completed.Add(bid);
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

    /// <summary>Versions of a key-level actor, as far as the schedule sees them: records which PACTs finished.</summary>
    private sealed class KeyedVersions : IActorStateVersions
    {
        public List<long> Finished { get; } = new();

        public bool PipelinesKeys => true;

        public CompletedVersion BatchCompleted(long bid) => default;

        public void BatchCommitted(long bid)
        {
        }

        public void DropAfter(long keptUpTo, bool keepWorking = false)
        {
        }

        public void PactFinished(long tid, long bid) => Finished.Add(tid);

        public void PactDropped(long tid)
        {
        }
    }

    private static PactAccess Keyed(long tid, params string[] keys) => new(tid, 1, keys.Cast<object>().ToHashSet());

    [Fact]
    public async Task Keyed_batches_start_together_queue_per_key_and_complete_in_bid_order()
    {
        var schedule = Create();
        var versions = new KeyedVersions();
        schedule.Attach(versions);
        schedule.Deliver(10, -1, [Keyed(10, "a"), Keyed(11, "b")]);
        schedule.Deliver(20, 10, [Keyed(20, "b"), Keyed(21, "c")]);

        // Every PACT of both batches enters at once; only the keys decide who waits.
        await Task.WhenAll(schedule.EnterAsync(10), schedule.EnterAsync(11), schedule.EnterAsync(20), schedule.EnterAsync(21));
        Assert.True(await schedule.EnterKeysAsync(21, ["c"]));
        Assert.True(await schedule.EnterKeysAsync(10, ["a"]));
        var waitsForB = schedule.EnterKeysAsync(20, ["b"]);
        Assert.False(waitsForB.IsCompleted); // PACT 11 of the earlier batch declared b

        schedule.Exit(21);
        Assert.Empty(_batches.Completed); // batch 20 is not done, and batch 10 comes first anyway
        await schedule.EnterKeysAsync(11, ["b"]);
        schedule.Exit(11);
        Assert.True(await waitsForB);
        schedule.Exit(20);
        Assert.Empty(_batches.Completed); // batch 20 finished here before batch 10: it waits to complete after it
        schedule.Exit(10);
        Assert.Equal([10L, 20L], _batches.Completed);
        Assert.Equal([21L, 11L, 20L, 10L], versions.Finished);

        var undeclared = await Assert.ThrowsAsync<TransactionAbortedException>(async () =>
        {
            schedule.Deliver(30, 20, [Keyed(30, "a")]);
            await schedule.EnterAsync(30);
            await schedule.EnterKeysAsync(30, ["a", "z"]);
        });
        Assert.Equal(AbortReason.UndeclaredAccess, undeclared.Reason);
        Assert.Contains("'z'", undeclared.Message);
    }

    [Fact]
    public async Task A_batch_with_a_pact_declared_whole_runs_alone_among_keyed_ones()
    {
        var schedule = Create();
        schedule.Attach(new KeyedVersions());
        schedule.Deliver(10, -1, [Keyed(10, "a")]);
        schedule.Deliver(20, 10, [(20, 1)]);
        schedule.Deliver(30, 20, [Keyed(30, "b")]);

        await schedule.EnterAsync(10);
        var whole = schedule.EnterAsync(20);
        var keyed = schedule.EnterAsync(30);
        Assert.False(whole.IsCompleted);
        Assert.False(keyed.IsCompleted); // not before the whole one, though its key is free
        schedule.Exit(10);
        await whole;
        Assert.False(keyed.IsCompleted);
        Assert.False(await schedule.EnterKeysAsync(20, ["a"])); // declared whole: uses the actor as a whole
        schedule.Exit(20);
        await keyed;
        schedule.Exit(30);
        Assert.Equal([10L, 20L, 30L], _batches.Completed);
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

    /// <summary>
    /// Two calls of one ACT on an actor ask to enter it (parallel calls: the second asks before the first has noted that it
    /// is in), with a batch delivered between the two. The ACT keeps the one place the first call took: the batch is
    /// after it, and does not start while the ACT works here. (A second place, after that batch, replaced the first, and
    /// let the batch run over keys the ACT had taken: its write was lost when the ACT installed its copy.)
    /// </summary>
    [Fact]
    public async Task Parallel_calls_of_one_act_share_its_place_and_a_batch_delivered_between_them_waits_for_it()
    {
        var schedule = Create();
        schedule.Attach(new KeyedVersions());
        await schedule.EnterActAsync(500, TimeSpan.FromMinutes(1)); // let in at once: no batch before it
        schedule.Deliver(10, -1, [Keyed(10, "k")]);

        var second = schedule.EnterActAsync(500, TimeSpan.FromMinutes(1));
        Assert.True(second.IsCompletedSuccessfully); // already in: the second call goes on at once
        Assert.Equal((Snapper.Hybrid.BatchPosition.None, -1L), schedule.Before(500));

        schedule.Deliver(11, 10, [Keyed(11, "z")]); // anything that moves the schedule on
        var batchAfter = schedule.EnterAsync(10);
        Assert.False(batchAfter.IsCompleted);

        schedule.ExitAct(500, Snapper.Hybrid.BatchPosition.None);
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

    private sealed class Activation : Snapper.Actors.ILocalCallee
    {
        public Task<Snapper.Actors.CallResponse>? TryCallLocal(Snapper.Actors.CallRequest request) => null;

        public Task<Snapper.Act.PrepareResult>? TryPrepareLocal(Snapper.Act.ActPhaseRequest request) => null;

        public Task? TryCommitLocal(Snapper.Act.ActPhaseRequest request) => null;
    }

    [Fact]
    public void An_earlier_activation_that_stops_taking_local_calls_leaves_the_one_that_took_over()
    {
        var schedule = Create();
        var earlier = new Activation();
        var later = new Activation();
        Assert.Null(schedule.LocalCallee);

        schedule.ServeLocalCalls(earlier);
        Assert.Same(earlier, schedule.LocalCallee);

        // A new activation registers before the old one's end has run its last stage.
        schedule.ServeLocalCalls(later);
        schedule.StopLocalCalls(earlier);
        Assert.Same(later, schedule.LocalCallee);

        schedule.StopLocalCalls(later);
        Assert.Null(schedule.LocalCallee);
    }
}
