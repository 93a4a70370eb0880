using Snapper.Tests.Actors;
using Xunit;

namespace Snapper.Tests.Serializability;

/// <summary>
/// Proof that the checker works on real executions: with read locks switched off, a staged write skew commits, and
/// the checker must find the cycle.
/// </summary>
public sealed class BrokenScheduleTests(UnsafeReadsClusterFixture fixture) : IClassFixture<UnsafeReadsClusterFixture>
{
    [Fact]
    public async Task Reads_without_locks_produce_a_cycle_the_checker_reports()
    {
        var ids = ClusterFixture.NewIds(2);
        var (x, y) = (ids[0], ids[1]);
        var (gate1, gate2) = ($"skew-1-{x}", $"skew-2-{x}");
        var run = new StagedHistory(fixture.Client);

        // T1 reads x and holds; T2 reads y and holds. Neither read took a lock.
        var t1 = run.Act(x, StagedHistory.Access(1, write: false, gate: gate1, children: [(y, StagedHistory.Access(1, write: true))]));
        await Gates.WhenReached(gate1);
        var t2 = run.Act(y, StagedHistory.Access(2, write: false, gate: gate2, children: [(x, StagedHistory.Access(2, write: true))]));
        await Gates.WhenReached(gate2);

        // T1 writes y over T2's read and commits; then T2 writes x over T1's read and commits. Each read what the
        // other then overwrote: T1 before T2 on x, T2 before T1 on y. (With read locks T1 would wait for T2 on y.)
        Gates.Release(gate1);
        var first = await StagedHistory.Outcome(1, t1);
        Gates.Release(gate2);
        var second = await StagedHistory.Outcome(2, t2);
        Assert.True(first.Committed && second.Committed, "the staged write skew did not commit: are read locks still taken?");

        var problems = HistoryChecker.Check([first, second], await run.FinalWriters(x, y));

        Assert.Contains(problems, p => p.StartsWith("conflict graph has a cycle", StringComparison.Ordinal));
    }
}

/// <summary>
/// Proof that the checker catches a broken hybrid schedule: an ACT that skips the serializability check commits what
/// it read from a PACT batch that then aborts.
/// </summary>
public sealed class BrokenHybridScheduleTests(UnsafeHybridClusterFixture fixture) : IClassFixture<UnsafeHybridClusterFixture>
{
    [Fact]
    public async Task Acts_that_skip_the_serializability_check_break_serializability_and_the_checker_reports_it()
    {
        var ids = ClusterFixture.NewIds(3);
        var (root, x, last) = (ids[0], ids[1], ids[2]);
        var gate = $"aborting-batch-{x}";
        var run = new StagedHistory(fixture.Client);
        var pact = run.BatchThatWritesThenFails(root, x, last, gate);
        await Gates.WhenReached(gate);

        // The batch completed on x, so the ACT may run there and reads its write. Without the wait for batch
        // max(BeforeSet) it commits at once, before the batch is resolved.
        var act = await StagedHistory.Outcome(2, run.Act(x, StagedHistory.Access(2, write: false)));
        Assert.True(act.Committed, "the ACT did not commit over the uncommitted batch: is the hybrid check still on?");

        // Now the batch fails: what the ACT read never happened.
        Gates.Release(gate);
        var failure = await Assert.ThrowsAsync<TransactionAbortedException>(() => pact.WaitAsync(StagedHistory.Bound));
        Assert.Equal(AbortReason.UserException, failure.Reason);

        var problems = HistoryChecker.Check([new RecordedTxn(1, false, []), act], await run.FinalWriters(root, x, last));

        Assert.Contains($"actor {x}: transaction 2 read [1], which is no prefix of the write order []", problems);
    }
}

/// <summary>
/// Proof that the checker catches a broken hybrid schedule: without the gate of the stricter rule, an ACT writes over a
/// PACT batch that has not committed, and the batch then aborts under it.
/// </summary>
public sealed class BrokenCommittedBatchesOnlyScheduleTests(UnsafeCommittedBatchesOnlyClusterFixture fixture)
    : IClassFixture<UnsafeCommittedBatchesOnlyClusterFixture>
{
    [Fact]
    public async Task Acts_running_over_uncommitted_batches_break_serializability_and_the_checker_reports_it()
    {
        var ids = ClusterFixture.NewIds(3);
        var (root, x, last) = (ids[0], ids[1], ids[2]);
        var gate = $"overrun-batch-{x}";
        var run = new StagedHistory(fixture.Client);
        var pact = run.BatchThatWritesThenFails(root, x, last, gate);
        await Gates.WhenReached(gate);

        // The rule would keep the ACT out of x until the batch committed; without the gate it writes over the
        // batch's version and commits, installing it.
        var act = await StagedHistory.Outcome(2, run.Act(x, StagedHistory.Access(2, write: true)));
        Assert.True(act.Committed, "the ACT did not commit over the uncommitted batch: is the gate still on?");

        // The batch fails and drops its versions, but x keeps the ACT's state, which has the batch's write in it.
        Gates.Release(gate);
        var failure = await Assert.ThrowsAsync<TransactionAbortedException>(() => pact.WaitAsync(StagedHistory.Bound));
        Assert.Equal(AbortReason.UserException, failure.Reason);

        var problems = HistoryChecker.Check([new RecordedTxn(1, false, []), act], await run.FinalWriters(root, x, last));

        Assert.Contains($"actor {x}: aborted transaction 1 is visible", problems);
    }
}

/// <summary>Runs hand-staged transactions of <see cref="HistoryActor"/>s and records them for <see cref="HistoryChecker"/>.</summary>
internal sealed class StagedHistory(IGrainFactory grains)
{
    public static readonly TimeSpan Bound = TimeSpan.FromSeconds(10);

    /// <summary>An access of transaction <paramref name="txn"/>, then its <paramref name="children"/> in order.</summary>
    public static Step Access(long txn, bool write, string? gate = null, bool fail = false, (long Actor, Step Step)[]? children = null) =>
        new(txn, write, [.. (children ?? []).Select(c => c.Step)], [.. (children ?? []).Select(c => c.Actor)], Parallel: false, fail, gate);

    /// <summary>Whether the transaction committed, and what it observed if it did.</summary>
    public static async Task<RecordedTxn> Outcome(long txn, Task<Observation[]> run)
    {
        try
        {
            return new RecordedTxn(txn, true, await run.WaitAsync(Bound));
        }
        catch (TransactionAbortedException)
        {
            return new RecordedTxn(txn, false, []);
        }
    }

    public Task<Observation[]> Act(long root, Step step) => Actor(root).StartTxn(Actor(root).Execute, step);

    /// <summary>
    /// PACT 1 writes <paramref name="root"/> and <paramref name="x"/>, then writes <paramref name="last"/>, reports at
    /// <paramref name="gate"/> there and, once released, fails. While it waits, its batch has completed on
    /// <paramref name="x"/> (the PACT made its one declared access there) and is not committed.
    /// </summary>
    public Task<Observation[]> BatchThatWritesThenFails(long root, long x, long last, string gate)
    {
        var step = Access(1, write: true, children: [(x, Access(1, write: true)), (last, Access(1, write: true, gate, fail: true))]);
        return Actor(root).StartTxn(Actor(root).Execute, step, ActorAccessInfo.Of(Actor(root), Actor(x), Actor(last)));
    }

    /// <summary>The committed writer list of each actor, read by one ACT each.</summary>
    public async Task<IReadOnlyDictionary<long, long[]>> FinalWriters(params long[] actors)
    {
        var final = new Dictionary<long, long[]>();
        foreach (var id in actors)
        {
            final[id] = await Actor(id).StartTxn(Actor(id).Writers, 0).WaitAsync(Bound);
        }

        return final;
    }

    private IHistoryActor Actor(long id) => grains.GetGrain<IHistoryActor>(id);
}
