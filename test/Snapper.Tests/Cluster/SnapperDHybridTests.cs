using Microsoft.Extensions.DependencyInjection;
using Snapper.Pact;
using Snapper.Tests.Actors;
using Snapper.Tests.Serializability;
using Xunit;
using Xunit.Abstractions;

namespace Snapper.Tests.Cluster;

/// <summary>
/// Hybrid execution across workers (thesis §4.2.4) on staged schedules: the serializability check compares batches of
/// both workers and global batches in one order, and an ACT on one worker commits only after the batches it read from
/// on the other committed. The cluster's bounds are long (<see cref="LongBoundsSnapperDFixture"/>): a batch held across
/// the staged steps of a test ends by the step that releases it, however slowly a loaded machine takes the steps between.
/// </summary>
public sealed class SnapperDHybridTests(LongBoundsSnapperDFixture fixture, ITestOutputHelper output) : IClassFixture<LongBoundsSnapperDFixture>
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(20);

    private IProbe Probe(long id) => fixture.Client.GetGrain<IProbe>(id);

    private long OnWorker(int worker) => fixture.OnWorker<IProbe>(worker, 1)[0];

    /// <summary>
    /// An ACT whose first actor is on worker 0 reads, on worker 1, a write of a batch that has not committed yet. It
    /// passes the check (nothing follows it, and no batch either worker emits later can come before the one it read) and
    /// must commit only after that batch, or abort with it. Both orders are staged: the ACT's votes are all in (it waits
    /// for the batch) before the batch ends, or the batch ends before the ACT's prepare reaches the actor it read.
    /// </summary>
    [Theory]
    [InlineData(false, true)]
    [InlineData(true, true)]
    [InlineData(false, false)]
    [InlineData(true, false)]
    public async Task An_act_on_one_worker_that_read_a_batch_of_the_other_commits_only_after_it_and_aborts_with_it(bool batchFails, bool actPreparesFirst)
    {
        var (holder, written, actRoot) = (OnWorker(1), OnWorker(1), OnWorker(0));
        var batchGate = $"remote-batch-{holder}-{batchFails}-{actPreparesFirst}";
        var actGate = $"remote-act-{actRoot}-{batchFails}-{actPreparesFirst}";

        // A local PACT of worker 1 writes `written` (its part there completes) and holds its batch uncommitted on `holder`.
        var pact = Probe(holder).StartTxn(Probe(holder).CallThenHold, new CallThenHold(written, batchGate, batchFails),
            ActorAccessInfo.Of(Probe(holder), Probe(written)));
        await Gates.WhenReached(batchGate);

        // The ACT has read that write once it reaches its gate: the batch is held until then.
        var act = Probe(actRoot).StartTxn(Probe(actRoot).ReadThenHold, new ReadThenHold(written, actGate));
        var tid = await Gates.WhenReached(actGate);
        if (actPreparesFirst)
        {
            var voted = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            var trace = fixture.Hooks.ActTrace;
            fixture.Hooks.ActTrace = (actor, t, step) =>
            {
                trace?.Invoke(actor, t, step);
                if (t == tid && step.StartsWith("votes:", StringComparison.Ordinal))
                {
                    voted.TrySetResult();
                }
            };
            try
            {
                Gates.Release(actGate);
                await voted.Task.WaitAsync(Bound);
            }
            finally
            {
                fixture.Hooks.ActTrace = trace;
            }

            // A negative check: a correct run passes however slow the silos are (the ACT cannot end while the batch
            // is held); the delay only gives a wrong early commit the time to show.
            await Task.Delay(300);
            Assert.False(act.IsCompleted, "the ACT committed before the batch it read from, on the other worker");
            Gates.Release(batchGate);
        }
        else
        {
            Gates.Release(batchGate);
            await Record.ExceptionAsync(() => pact.WaitAsync(Bound));
            Gates.Release(actGate);
        }

        if (batchFails)
        {
            await Assert.ThrowsAsync<TransactionAbortedException>(() => pact.WaitAsync(Bound));
            var abort = await Assert.ThrowsAsync<TransactionAbortedException>(() => act.WaitAsync(Bound));
            Assert.Equal(AbortReason.CascadingAbort, abort.Reason);
            Assert.Equal(0, await Probe(written).StartTxn(Probe(written).Read, 0).WaitAsync(Bound));
        }
        else
        {
            await pact.WaitAsync(Bound);
            Assert.Equal(1, await act.WaitAsync(Bound));
        }
    }

    [Fact]
    public async Task An_act_after_a_global_batch_on_one_worker_and_before_it_on_the_other_fails_the_check()
    {
        var (pactRoot, first, second) = (OnWorker(0), OnWorker(0), OnWorker(1));
        var actGate = $"act-across-{first}";
        var delivery = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var firstSchedule = fixture.WorkerServices(0).GetRequiredService<PactService>().ScheduleOf(Probe(first).GetGrainId());
        var secondSchedule = fixture.WorkerServices(1).GetRequiredService<PactService>().ScheduleOf(Probe(second).GetGrainId());
        try
        {
            // A global PACT writes `first` (worker 0), then `second` (worker 1), whose worker does not have the batch yet.
            fixture.Hooks.DelayGlobalDelivery = (worker, _) => worker == 1 ? delivery.Task : null;
            var global = Probe(pactRoot).StartTxn(Probe(pactRoot).TouchEach, new[] { first, second },
                ActorAccessInfo.Of(Probe(pactRoot), Probe(first), Probe(second)));

            // An ACT writes `first` after the global batch (placed after it, it waits there until the batch's part
            // completed) and `second` before it (the batch has not reached worker 1), then holds.
            await Staged.Until(() => firstSchedule.UncommittedBatchCount > 0, "the global batch never reached the first worker's actor", Bound);
            var act = await EnteredAsync(() => Probe(first).StartTxn(Probe(first).CallThenHold, new CallThenHold(second, actGate)), actGate);

            // The global batch reaches worker 1 and is placed after the ACT on `second`: the ACT now runs before and after it.
            delivery.SetResult();
            await Staged.Until(() => secondSchedule.UncommittedBatchCount > 0, "the global batch never reached the second worker's actor", Bound);

            Gates.Release(actGate);
            var abort = await Assert.ThrowsAsync<TransactionAbortedException>(() => act.WaitAsync(Bound));
            Assert.Equal(AbortReason.Serializability, abort.Reason);
            output.WriteLine(abort.Message);

            // The batch goes on once the ACT left, and only its writes remain.
            await global.WaitAsync(Bound);
            Assert.Equal(1, await Probe(first).StartTxn(Probe(first).Read, 0).WaitAsync(Bound));
            Assert.Equal(1, await Probe(second).StartTxn(Probe(second).Read, 0).WaitAsync(Bound));
        }
        finally
        {
            fixture.Hooks.DelayGlobalDelivery = null;
            delivery.TrySetResult();
            Gates.Release(actGate);
        }
    }

    /// <summary>
    /// A staged step: starts an ACT that reports at <paramref name="gate"/> once it is in, again each time it gives way
    /// before that. An ACT arriving at an actor whose batch has been delivered but not yet completed waits only
    /// <see cref="Hosting.SnapperOptions.HybridWaitTimeout"/> (1 ms) and then gives way (<see cref="AbortReason.HybridDeadlock"/>);
    /// how soon the batch completes depends on the machine's load, so the test waits for the ACT to be in, not for a time.
    /// </summary>
    private static async Task<Task> EnteredAsync(Func<Task> start, string gate)
    {
        var reached = Gates.WhenReached(gate); // bounded (30 s)
        for (var attempt = 1; ; attempt++)
        {
            var act = start();
            if (await Task.WhenAny(act, reached) == reached)
            {
                await reached;
                return act;
            }

            var gaveWay = await Assert.ThrowsAsync<TransactionAbortedException>(() => act);
            Assert.Equal(AbortReason.HybridDeadlock, gaveWay.Reason);
            Assert.True(attempt < 100, "the ACT gave way 100 times");
        }
    }
}

/// <summary>Random hybrid histories with actors on both workers, checked for serializability.</summary>
[Collection(SnapperDCollection.Name)]
public sealed class SnapperDHybridHistoryTests(SnapperDFixture fixture, ITestOutputHelper output)
{
    /// <summary>Mostly PACTs: each ACT meets batches on most actors it uses (the 50/50 mix is in <see cref="SnapperDTests"/>).</summary>
    [Theory]
    [InlineData(81, 0.9)]
    public Task Random_hybrid_histories_with_actors_on_both_workers_are_serializable_under_the_check(int seed, double pactFraction) =>
        RandomRuns.RunAndCheck(fixture.Client, output, seed, RandomRuns.Hybrid(pactFraction));

    /// <summary>
    /// The same while worker 1 loses the finish of one global PACT in 25 (the call fails, as a lost message would): each
    /// such PACT whose part there still holds an access cannot complete, so it aborts with its batch and every later one.
    /// The history stays serializable, and no transaction is told its own code was at fault (a call left unawaited, an
    /// invalid call, an undeclared access), since the code of every one is right: a lost finish was reported as an
    /// unawaited call once, and a call reaching a dropped part as an invalid one; both are now transient aborts.
    /// </summary>
    [Theory]
    [InlineData(97, 0.9)]
    public async Task Random_hybrid_histories_with_actors_on_both_workers_stay_serializable_when_finishes_are_lost(int seed, double pactFraction)
    {
        var lost = 0;
        fixture.Hooks.DelayGlobalFinish = (worker, gtid) =>
        {
            if (worker != 1 || gtid % 25 != 0)
            {
                return null;
            }

            Interlocked.Increment(ref lost);
            return Task.FromException(new TimeoutException("lost by a test"));
        };
        IReadOnlyDictionary<AbortReason, int> reasons;
        try
        {
            reasons = await RandomRuns.RunAndCheck(fixture.Client, output, seed, RandomRuns.Hybrid(pactFraction));
        }
        finally
        {
            fixture.Hooks.DelayGlobalFinish = null;
        }

        output.WriteLine($"{lost} finish(es) lost");
        Assert.True(lost > 0, "no global PACT sent worker 1 a finish that the test could lose");
        Assert.All(
            new[] { AbortReason.UnawaitedCall, AbortReason.InvalidCall, AbortReason.UndeclaredAccess },
            reason => Assert.Equal(0, reasons.GetValueOrDefault(reason)));
    }

    /// <summary>The same over the keys of key-value actors on both workers.</summary>
    [Theory]
    [InlineData(85, 0.5)]
    public Task Random_key_value_histories_with_actors_on_both_workers_are_serializable(int seed, double pactFraction) =>
        RandomRuns.RunAndCheck(fixture.Client, output, seed, RandomRuns.Hybrid(pactFraction) with { Keyed = true });

    /// <summary>With each key replicated by an update dependency on another actor (forwarding across workers).</summary>
    [Theory]
    [InlineData(86, 0.9)]
    public Task Random_key_value_histories_with_replicated_keys_on_both_workers_are_serializable(int seed, double pactFraction) =>
        RandomRuns.RunAndCheck(fixture.Client, output, seed, RandomRuns.Hybrid(pactFraction) with { Keyed = true, Mirrored = true });
}

/// <summary>
/// Random hybrid histories across workers on silos that log (each to a folder of its own, fsync and all): an ACT meets
/// batches of its own worker, whose commit records it may follow once they are queued, and batches of the other
/// worker, which must have committed there.
/// </summary>
public sealed class LoggedSnapperDHistoryTests(LoggedSnapperDFixture fixture, ITestOutputHelper output) : IClassFixture<LoggedSnapperDFixture>
{
    [Theory]
    [InlineData(87, 0.9)]
    public Task Random_hybrid_histories_on_logging_workers_are_serializable(int seed, double pactFraction) =>
        RandomRuns.RunAndCheck(fixture.Client, output, seed, RandomRuns.Hybrid(pactFraction));

    [Theory]
    [InlineData(88, 0.5)]
    public Task Random_key_value_histories_on_logging_workers_are_serializable(int seed, double pactFraction) =>
        RandomRuns.RunAndCheck(fixture.Client, output, seed, RandomRuns.Hybrid(pactFraction) with { Keyed = true });
}

/// <summary>The SnapperD cluster with a write-ahead log on every silo, in folders deleted with the fixture.</summary>
public sealed class LoggedSnapperDFixture : SnapperDFixture, IDisposable
{
    private readonly Durability.TemporaryFolder _data = new();

    protected override void ConfigureSilo(int index, Hosting.SnapperOptions options) => options.DataFolder = Path.Combine(_data.Path, $"silo-{index}");

    public void Dispose() => _data.Dispose();
}

/// <summary>Hybrid histories across workers under the stricter rule, <see cref="Hosting.HybridScheduling.CommittedBatchesOnly"/>.</summary>
public sealed class CommittedBatchesOnlySnapperDHistoryTests(CommittedBatchesOnlySnapperDFixture fixture, ITestOutputHelper output)
    : IClassFixture<CommittedBatchesOnlySnapperDFixture>
{
    [Theory]
    [InlineData(83, 0.5)]
    [InlineData(84, 0.9)]
    public Task Random_hybrid_histories_with_actors_on_both_workers_are_serializable(int seed, double pactFraction) =>
        RandomRuns.RunAndCheck(fixture.Client, output, seed, RandomRuns.Hybrid(pactFraction));
}

/// <summary>Hybrid histories across workers while every bound of the protocol is tight and keeps firing.</summary>
public sealed class TightBoundsSnapperDHistoryTests(TightBoundsSnapperDFixture fixture, ITestOutputHelper output)
    : IClassFixture<TightBoundsSnapperDFixture>
{
    [Theory]
    [InlineData(87, 0.5)]
    [InlineData(88, 0.9)]
    public Task Random_hybrid_histories_stay_serializable_when_every_bound_fires(int seed, double pactFraction) =>
        RandomRuns.RunAndCheck(fixture.Client, output, seed, RandomRuns.Hybrid(pactFraction));

    /// <summary>The same over the keys of key-value actors: at actor level, with each key replicated by a dependency, and at key level.</summary>
    [Theory]
    [InlineData(94, 0.5, false, false)]
    [InlineData(95, 0.9, true, false)]
    [InlineData(96, 0.5, false, true)]
    public Task Random_key_value_histories_stay_serializable_when_every_bound_fires(int seed, double pactFraction, bool mirrored, bool keyLevel) =>
        RandomRuns.RunAndCheck(fixture.Client, output, seed, RandomRuns.Hybrid(pactFraction) with { Keyed = true, Mirrored = mirrored, KeyLevel = keyLevel });

    /// <summary>The same while the hot actors move between the workers (a migration a bound rolls back is counted).</summary>
    [Theory]
    [InlineData(89, 0.5)]
    public Task Random_hybrid_histories_stay_serializable_while_hot_actors_move_and_every_bound_fires(int seed, double pactFraction) =>
        RandomRuns.RunAndCheck(fixture.Client, output, seed, RandomRuns.Hybrid(pactFraction),
            (hot, ended) => MigrationLoad.MoveBackAndForthAsync(fixture.Client, output,
                [.. hot.Select(id => (ITransactionalActor)fixture.Client.GetGrain<IHistoryActor>(id))], seed, ended, rollbacksAllowed: true));
}
