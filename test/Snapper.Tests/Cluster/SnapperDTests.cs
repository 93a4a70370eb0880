using Microsoft.Extensions.DependencyInjection;
using Snapper.Actors;
using Snapper.Cluster;
using Snapper.Pact;
using Snapper.Tests.Actors;
using Snapper.Tests.Serializability;
using Xunit;
using Xunit.Abstractions;

namespace Snapper.Tests.Cluster;

/// <summary>A master and two workers: placement, local and global PACTs, ACTs across workers, aborts across workers.</summary>
[Collection(SnapperDCollection.Name)]
public sealed class SnapperDTests(SnapperDFixture fixture, ITestOutputHelper output)
{
    private IBankAccount Account(long id) => fixture.Client.GetGrain<IBankAccount>(id);

    private IProbe Probe(long id) => fixture.Client.GetGrain<IProbe>(id);

    private async Task Fund(IEnumerable<long> ids, decimal amount)
    {
        foreach (var id in ids)
        {
            await Account(id).StartTxn(Account(id).Reset, amount);
        }
    }

    // Read with a PACT (an ACT may give way to batches whose abort is still on its way from the master), retried if an
    // earlier test's failed batch takes it along in a cascading abort.
    private Task<decimal> BalanceOf(long id) => RetryCascading(() => Account(id).StartTxn(Account(id).Balance, 0, ActorAccessInfo.Of(Account(id))));

    private static async Task<T> RetryCascading<T>(Func<Task<T>> transaction)
    {
        for (var attempt = 1; ; attempt++)
        {
            try
            {
                return await transaction();
            }
            catch (TransactionAbortedException aborted) when (aborted.Reason == AbortReason.CascadingAbort && attempt < 5)
            {
            }
        }
    }

    [Fact]
    public async Task Actors_activate_on_the_worker_their_placement_names_and_never_on_the_master()
    {
        var ids = ClusterFixture.NewIds(24);
        await Fund(ids, 1m);
        foreach (var id in ids)
        {
            var actor = Account(id).GetGrainId();
            var worker = fixture.WorkerOf(actor);
            Assert.True(fixture.WorkerServices(worker).GetRequiredService<ActorDirectory>().Contains(actor), $"actor {id} is not on worker {worker}");
            Assert.False(fixture.WorkerServices(1 - worker).GetRequiredService<ActorDirectory>().Contains(actor));
            Assert.False(fixture.MasterServices.GetRequiredService<ActorDirectory>().Contains(actor));
        }
    }

    [Fact]
    public async Task A_worker_that_voted_and_never_heard_the_commit_asks_the_master_and_commits_its_part()
    {
        var a = fixture.OnWorker(0, 1)[0];
        var b = fixture.OnWorker(1, 1)[0];
        await Fund([a, b], 100m);
        var from = Account(a);
        fixture.Hooks.WithholdGlobalCommit = (worker, _) => worker == 1;
        try
        {
            // The client hears "committed" from worker 0; worker 1's part waits, voted, until it asks (ExecutionTimeout).
            await from.StartTxn(from.Transfer, new Transfer(1, b, 30m), ActorAccessInfo.Of(from, Account(b)));
        }
        finally
        {
            fixture.Hooks.WithholdGlobalCommit = null;
        }

        Assert.Equal(130m, await BalanceOf(b));
        Assert.Equal(70m, await BalanceOf(a));
    }

    [Fact]
    public async Task A_pact_on_one_worker_is_local_and_one_spanning_workers_is_ordered_by_the_master()
    {
        var a = fixture.OnWorker(0, 2);
        var b = fixture.OnWorker(1, 1);
        await Fund([.. a, .. b], 100m);
        var master = fixture.MasterServices.GetRequiredService<Snapper.Diagnostics.SnapperMetrics>();

        // Local: both actors on worker 0.
        var from = Account(a[0]);
        await from.StartTxn(from.Transfer, new Transfer(1, a[1], 10m), ActorAccessInfo.Of(from, Account(a[1])));

        // Global: worker 0 to worker 1, and back.
        await from.StartTxn(from.Transfer, new Transfer(2, b[0], 20m), ActorAccessInfo.Of(from, Account(b[0])));
        var back = Account(b[0]);
        await back.StartTxn(back.Transfer, new Transfer(3, a[1], 5m), ActorAccessInfo.Of(back, Account(a[1])));

        Assert.Equal(70m, await BalanceOf(a[0]));
        Assert.Equal(115m, await BalanceOf(a[1]));
        Assert.Equal(115m, await BalanceOf(b[0]));
        Assert.Equal(0, fixture.MasterServices.GetRequiredService<GlobalPactService>().Uncommitted);
    }

    [Fact]
    public async Task Concurrent_global_and_local_pacts_and_acts_conserve_money()
    {
        const int PerWorker = 6;
        var accounts = fixture.OnWorker(0, PerWorker).Concat(fixture.OnWorker(1, PerWorker)).ToArray();
        await Fund(accounts, 1_000m);
        var random = new Random(5);

        // With 12 accounts, 100 ACTs fired at once beside 200 PACTs mostly die by wait-die or give way to the batches (all
        // 100 did on a quiet machine), so each ACT is submitted again until it commits or a bound runs out.
        var actRetries = 0;
        var actRetry = new RetryPolicy { MaxAttempts = 20, OnRetry = (_, _) => Interlocked.Increment(ref actRetries) };
        var work = Enumerable.Range(0, 300).Select(async i =>
        {
            int from, to;
            lock (random)
            {
                from = random.Next(accounts.Length);
                to = (from + 1 + random.Next(accounts.Length - 1)) % accounts.Length;
            }

            var kind = i % 3 == 0 ? "ACT" : from / PerWorker == to / PerWorker ? "local PACT" : "global PACT";
            var source = Account(accounts[from]);
            var input = new Transfer(10_000 + i, accounts[to], 1m);
            try
            {
                _ = kind == "ACT"
                    ? await source.StartTxn(source.Transfer, input, actRetry)
                    : await source.StartTxn(source.Transfer, input, ActorAccessInfo.Of(source, Account(accounts[to])));
                return (Kind: kind, Abort: (TransactionAbortedException?)null);
            }
            catch (TransactionAbortedException abort)
            {
                return (Kind: kind, Abort: abort);
            }
        }).ToArray();

        var outcomes = await Task.WhenAll(work);
        output.WriteLine($"ACT attempts submitted again: {actRetries}");
        foreach (var group in outcomes.GroupBy(o => o.Kind))
        {
            var reasons = group.Where(o => o.Abort is not null).GroupBy(o => RootReason(o.Abort!)).Select(r => $"{r.Key} {r.Count()}");
            output.WriteLine($"{group.Key}: {group.Count(o => o.Abort is null)} of {group.Count()} committed; aborts by root reason: {string.Join(", ", reasons)}");
        }

        // How many commit depends on the machine's load (wait-die, ACTs giving way to batches, the fixture's bounds), so
        // the test asks only what cannot depend on timing: none of these transfers fails by itself (every balance covers
        // every withdrawal and names a known account), a PACT never aborts on a conflict, and every kind commits at least
        // once, so that the conservation check below sees all three at work.
        foreach (var (kind, abort) in outcomes.Where(o => o.Abort is not null))
        {
            var root = RootReason(abort!);
            Assert.False(root is AbortReason.UserException or AbortReason.InvalidCall or AbortReason.UndeclaredAccess,
                $"{kind} aborted by its own code: {abort}");
            if (kind != "ACT")
            {
                Assert.False(root is AbortReason.WaitDie or AbortReason.LockTimeout or AbortReason.HybridDeadlock
                        or AbortReason.Serializability or AbortReason.SerializabilityIncompleteAfterSet,
                    $"{kind} aborted on a conflict: {abort}");
            }
        }

        foreach (var kind in new[] { "ACT", "local PACT", "global PACT" })
        {
            Assert.Contains(outcomes, o => o.Kind == kind && o.Abort is null);
        }

        var total = 0m;
        foreach (var id in accounts)
        {
            total += await BalanceOf(id);
        }

        Assert.Equal(accounts.Length * 1_000m, total);
    }

    /// <summary>The reason of the first failure behind a cascading abort, where the silo knew it; else the abort's own.</summary>
    private static AbortReason RootReason(TransactionAbortedException abort)
    {
        while (abort.Reason == AbortReason.CascadingAbort && abort.InnerException is TransactionAbortedException cause)
        {
            abort = cause;
        }

        return abort.Reason;
    }

    [Fact]
    public async Task A_global_pact_that_throws_on_the_other_worker_aborts_everywhere()
    {
        var a = fixture.OnWorker(0, 1)[0];
        var b = fixture.OnWorker(1, 1)[0];
        await Fund([a, b], 10m);
        var from = Account(a);

        // Deposit refuses a non-positive amount on worker 1, after worker 0 already withdrew.
        var failed = await Assert.ThrowsAsync<TransactionAbortedException>(() =>
            RetryCascading(() => from.StartTxn(from.Transfer, new Transfer(1, b, -5m), ActorAccessInfo.Of(from, Account(b)))));
        Assert.Equal(AbortReason.UserException, failed.Reason);
        Assert.Equal(10m, await BalanceOf(a));
        Assert.Equal(10m, await BalanceOf(b));

        // Both workers go on committing global PACTs afterwards.
        await RetryCascading(() => from.StartTxn(from.Transfer, new Transfer(2, b, 3m), ActorAccessInfo.Of(from, Account(b))));
        Assert.Equal(7m, await BalanceOf(a));
        Assert.Equal(13m, await BalanceOf(b));
    }

    [Fact]
    public async Task A_worker_that_missed_an_abort_applies_it_before_the_next_global_batch_it_receives()
    {
        var (root, onFirst, onSecond) = (fixture.OnWorker<IProbe>(0, 1)[0], fixture.OnWorker<IProbe>(0, 1)[0], fixture.OnWorker<IProbe>(1, 1)[0]);
        var gate = $"failing-global-{root}";
        try
        {
            // The master's abort message to worker 1 is lost (a partition, say): only what later messages carry can tell it.
            fixture.Hooks.DelayGlobalAbort = (worker, _) => worker == 1 ? Task.FromException(new TimeoutException("lost by a test")) : null;

            // A global PACT writes `onSecond` on worker 1 (which completes its part and votes), then fails on worker 0.
            var failing = Probe(root).StartTxn(Probe(root).CallThenHold, new CallThenHold(onSecond, gate, ThenFail: true),
                ActorAccessInfo.Of(Probe(root), Probe(onSecond)));
            await Gates.WhenReached(gate);
            Gates.Release(gate);
            Assert.Equal(AbortReason.UserException, (await Assert.ThrowsAsync<TransactionAbortedException>(() => failing.WaitAsync(TimeSpan.FromSeconds(20)))).Reason);

            // The next global PACT on the same actors: worker 1 must drop the aborted part before it runs this one, or this
            // one would read the aborted write, be voted for by the shortcut, commit, and then be dropped on worker 1 when it
            // learns of the abort.
            // (Retried on a cascading abort: a batch a previous test left on a worker may fail and take it along.)
            await RetryCascading(async () =>
            {
                await Probe(onFirst).StartTxn(Probe(onFirst).TouchEach, new[] { onSecond }, ActorAccessInfo.Of(Probe(onFirst), Probe(onSecond)));
                return true;
            }).WaitAsync(TimeSpan.FromSeconds(20));
        }
        finally
        {
            fixture.Hooks.DelayGlobalAbort = null;
        }

        Assert.Equal(1, await Probe(onSecond).StartTxn(Probe(onSecond).Read, 0).WaitAsync(TimeSpan.FromSeconds(20)));
        Assert.Equal(0, await Probe(root).StartTxn(Probe(root).Read, 0).WaitAsync(TimeSpan.FromSeconds(20)));
    }

    [Fact]
    public async Task A_global_pact_whose_finish_does_not_reach_a_worker_aborts_at_once_with_a_transient_reason()
    {
        var (root, unused) = (fixture.OnWorker<IProbe>(0, 1)[0], fixture.OnWorker<IProbe>(1, 1)[0]);
        var declared = ActorAccessInfo.Of(Probe(root), Probe(unused));
        var askedFor = -1L;
        TransactionAbortedException failed;
        try
        {
            // The PACT declares an actor on worker 1 and never calls it: only the finish can release that access, and the
            // finish call to worker 1 fails (as if the message were lost), so worker 1's part can never complete. Worker 0's
            // part completes and may vote before the root learns that, so only the master can abort the batch then.
            fixture.Hooks.DelayGlobalFinish = (worker, gtid) =>
            {
                if (worker != 1)
                {
                    return null;
                }

                Interlocked.Exchange(ref askedFor, gtid);
                return Task.FromException(new TimeoutException("lost by a test"));
            };

            failed = await Assert.ThrowsAsync<TransactionAbortedException>(() => RetryCascading(async () =>
            {
                await Probe(root).StartTxn(Probe(root).Increment, 1, declared);
                return true;
            }).WaitAsync(TimeSpan.FromSeconds(20)));
        }
        finally
        {
            fixture.Hooks.DelayGlobalFinish = null;
        }

        // Timing failed it, not its code: a RetryPolicy retries it (an unawaited call would not be). It ended on the root's
        // report, not on the master's watchdog, whose reason would be ExecutionTimeout.
        output.WriteLine($"{failed.Reason}: {failed.Message}");
        Assert.Equal(AbortReason.PrepareFailed, failed.Reason);
        Assert.True(failed.IsTransient);
        Assert.Equal(failed.Tid, Interlocked.Read(ref askedFor));
        Assert.Contains("worker(s) 1", failed.Message);

        // Nothing of it committed, and the same PACT commits once the finish gets through.
        Assert.Equal(0, await RetryCascading(() => Probe(root).StartTxn(Probe(root).Read, 0, ActorAccessInfo.Of(Probe(root)))));
        await RetryCascading(async () =>
        {
            await Probe(root).StartTxn(Probe(root).Increment, 1, declared);
            return true;
        }).WaitAsync(TimeSpan.FromSeconds(20));
        Assert.Equal(1, await RetryCascading(() => Probe(root).StartTxn(Probe(root).Read, 0, ActorAccessInfo.Of(Probe(root)))));
    }

    [Fact]
    public async Task A_global_pact_whose_part_is_dropped_while_its_method_runs_there_reports_the_cascade_not_an_invalid_call()
    {
        var (root, remote) = (fixture.OnWorker<IProbe>(0, 1)[0], fixture.OnWorker<IProbe>(1, 1)[0]);
        var gate = $"reach-then-write-{remote}";
        var master = fixture.MasterServices.GetRequiredService<GlobalPactService>();
        var workerOne = fixture.WorkerServices(1).GetRequiredService<PactService>();
        var abortReachesWorkerZero = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        try
        {
            // The master's abort reaches worker 0 (the root's) only when the test says so, worker 1 at once.
            fixture.Hooks.DelayGlobalAbort = (worker, _) => worker == 0 ? abortReachesWorkerZero.Task : null;

            // The root calls `remote` on worker 1, whose method stops at the gate before it touches its state.
            var pact = Probe(root).StartTxn(Probe(root).CallReachThenWrite, remote, ActorAccessInfo.Of(Probe(root), Probe(remote)));
            var gbid = await Gates.WhenReached(gate);
            Assert.True(gbid > 0, "the PACT is not global");

            // The master aborts the batch (as when another PACT of it failed); worker 1 drops its part, worker 0 not yet.
            master.Abort(gbid, new TransactionAbortedException(gbid, AbortReason.UserException, "failed by a test"));
            await Staged.Until(() => workerOne.HeardAbortOf(gbid), "worker 1 never heard the abort", TimeSpan.FromSeconds(20));

            // The method goes on and finds its PACT gone on worker 1. The root hears that before its own worker hears the
            // abort, so what the method reports is what the client sees: the cascade, a transient reason.
            Gates.Release(gate);
            var abort = await Assert.ThrowsAsync<TransactionAbortedException>(() => pact.WaitAsync(TimeSpan.FromSeconds(20)));
            output.WriteLine($"{abort.Reason}: {abort.Message}");
            Assert.Equal(AbortReason.CascadingAbort, abort.Reason);
            Assert.True(abort.IsTransient);
        }
        finally
        {
            fixture.Hooks.DelayGlobalAbort = null;
            abortReachesWorkerZero.TrySetResult();
            Gates.Release(gate);
        }

        Assert.Equal(0, await RetryCascading(() => Probe(remote).StartTxn(Probe(remote).Read, 0, ActorAccessInfo.Of(Probe(remote)))).WaitAsync(TimeSpan.FromSeconds(20)));
    }

    [Fact]
    public async Task An_abort_that_reaches_a_worker_while_it_merges_the_aborted_part_drops_that_part()
    {
        var (root, remote) = (fixture.OnWorker<IProbe>(0, 1)[0], fixture.OnWorker<IProbe>(1, 1)[0]);
        var bound = TimeSpan.FromSeconds(20);
        var gate = $"merge-abort-{root}";
        var master = fixture.MasterServices.GetRequiredService<GlobalPactService>();
        var worker = fixture.WorkerServices(1).GetRequiredService<PactService>();
        var delivery = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var merging = new TaskCompletionSource<long>(TaskCreationOptions.RunContinuationsAsynchronously);
        var merged = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var (holdDelivery, holdMerge) = (1, 1);
        Task first;
        try
        {
            // The first global PACT's root runs on worker 0 and waits at the gate (before its call to worker 1), while the
            // batch's sub-batch to worker 1 is held back.
            fixture.Hooks.DelayGlobalDelivery = (index, _) => index == 1 && Interlocked.Exchange(ref holdDelivery, 0) == 1 ? delivery.Task : null;
            first = Probe(root).StartTxn(Probe(root).Hold, new Hold(gate, AccessMode.ReadWrite, ThenTouch: remote),
                ActorAccessInfo.Of(Probe(root), Probe(remote)));
            var firstTid = await Gates.WhenReached(gate);

            // Worker 1 takes the sub-batch from its arrivals to merge it, and stops there (a thread preempted) while the
            // master aborts the batch, tells both workers, and sends the next global batch, which carries the abort too.
            fixture.Hooks.BeforeGlobalPartMerged = (index, gbid) =>
            {
                // The first PACT's batch is the one held back from worker 1: its gbid is at most the PACT's global tid.
                if (index != 1 || gbid > firstTid || Interlocked.Exchange(ref holdMerge, 0) == 0)
                {
                    return;
                }

                master.Abort(gbid, new TransactionAbortedException(gbid, AbortReason.CascadingAbort, $"global batch {gbid} aborted by a test while worker 1 merges it"));
                merging.TrySetResult(gbid);
                var next = SpinWait.SpinUntil(() => worker.LastGlobalArrived > gbid, bound);
                merged.TrySetResult();
                Assert.True(next, "the next global batch did not reach worker 1");
            };
            delivery.TrySetResult();
            var gbid = await merging.Task.WaitAsync(bound);
            await Assert.ThrowsAsync<TransactionAbortedException>(() => first.WaitAsync(bound));

            // The next global PACT on the same actors; then the first one's root goes on to call worker 1.
            var second = Probe(root).StartTxn(Probe(root).TouchEach, new[] { remote }, ActorAccessInfo.Of(Probe(root), Probe(remote)));
            await merged.Task.WaitAsync(bound);
            Gates.Release(gate);
            await second.WaitAsync(bound);
        }
        finally
        {
            fixture.Hooks.DelayGlobalDelivery = null;
            fixture.Hooks.BeforeGlobalPartMerged = null;
            delivery.TrySetResult();
            Gates.Release(gate);
        }

        // Had worker 1 merged the aborted part, it would have run the first PACT's call there and voted for it, a vote the
        // master ignores; the second batch, committed by the master, would wait behind it on worker 1 until worker 1 asked
        // about the first, heard "aborted", and dropped both: the second PACT's write lost on `remote`.
        Assert.Equal(1, await Probe(remote).StartTxn(Probe(remote).Read, 0).WaitAsync(bound));
        Assert.Equal(0, await Probe(root).StartTxn(Probe(root).Read, 0).WaitAsync(bound));
    }

    [Fact]
    public async Task A_global_pact_is_finished_by_the_declaration_it_was_ordered_with_whatever_its_caller_does_to_it_later()
    {
        var (root, remote) = (fixture.OnWorker<IProbe>(0, 1)[0], fixture.OnWorker<IProbe>(1, 1)[0]);
        var (rootId, bound) = (Probe(root).GetGrainId(), TimeSpan.FromSeconds(20));
        var gate = $"global-declaration-changed-{root}";
        ActorAccessInfo? shared = null;
        try
        {
            // The object the PACT's root holds, as a caller in the same silo would share it.
            fixture.Hooks.BeforePactOrdered = info =>
            {
                if (info.Accesses.ContainsKey(rootId))
                {
                    Interlocked.CompareExchange(ref shared, info, null);
                }
            };
            var running = Probe(root).StartTxn(Probe(root).Hold, new Hold(gate, AccessMode.ReadWrite), ActorAccessInfo.Of(Probe(root), Probe(remote)));
            await Gates.WhenReached(gate);

            // While its method runs, the caller takes out the actor on worker 1, which the PACT never calls: worker 1's
            // part must still be finished, or the global batch could not complete there.
            Assert.True(shared!.Accesses.Remove(Probe(remote).GetGrainId()));
            Gates.Release(gate);
            await running.WaitAsync(bound);
        }
        finally
        {
            fixture.Hooks.BeforePactOrdered = null;
            Gates.Release(gate);
        }

        Assert.Equal(0, await Probe(remote).StartTxn(Probe(remote).Read, 0, ActorAccessInfo.Of(Probe(remote))).WaitAsync(bound));
        Assert.Equal(1, await Probe(root).StartTxn(Probe(root).Read, 0, ActorAccessInfo.Of(Probe(root))).WaitAsync(bound));
    }

    [Fact]
    public async Task A_global_pact_calling_an_undeclared_actor_on_an_undeclared_worker_aborts_at_once()
    {
        var a = fixture.OnWorker(0, 2);
        var b = fixture.OnWorker(1, 1)[0];
        await Fund([.. a, b], 10m);
        var from = Account(a[0]);

        // Declares worker 0's actors only (a local PACT) but calls worker 1.
        var local = await Assert.ThrowsAsync<TransactionAbortedException>(() => RetryCascading(() =>
            from.StartTxn(from.Transfer, new Transfer(1, b, 1m), ActorAccessInfo.Of(from, Account(a[1])))));
        Assert.Equal(AbortReason.UndeclaredAccess, local.Reason);

        // Declares worker 1 (a global PACT) but calls worker 0's other actor.
        var global = await Assert.ThrowsAsync<TransactionAbortedException>(() => RetryCascading(() =>
            from.StartTxn(from.Transfer, new Transfer(2, a[1], 1m), ActorAccessInfo.Of(from, Account(b)))));
        Assert.Equal(AbortReason.UndeclaredAccess, global.Reason);
        Assert.Equal(10m, await BalanceOf(a[0]));
        Assert.Equal(10m, await BalanceOf(a[1]));
        Assert.Equal(10m, await BalanceOf(b));
    }

    [Fact]
    public async Task A_global_pact_that_leaves_a_declared_actor_on_the_other_worker_unused_commits()
    {
        var a = fixture.OnWorker(0, 2);
        var unused = fixture.OnWorker(1, 1)[0];
        await Fund([.. a, unused], 30m);
        var from = Account(a[0]);

        // Declares worker 1's actor but never calls it: its access there is released by Finish, which may reach worker 1
        // before the global batch does.
        for (var i = 0; i < 20; i++)
        {
            await RetryCascading(() => from.StartTxn(from.Transfer, new Transfer(i, a[1], 1m), ActorAccessInfo.Of(from, Account(a[1]), Account(unused))));
        }

        Assert.Equal(10m, await BalanceOf(a[0]));
        Assert.Equal(50m, await BalanceOf(a[1]));
        Assert.Equal(30m, await BalanceOf(unused));
    }

    [Theory]
    [InlineData(71, 0.0)]
    [InlineData(72, 1.0)]
    [InlineData(73, 0.5)]
    public Task Random_histories_with_actors_on_both_workers_are_serializable(int seed, double pactFraction) =>
        RandomRuns.RunAndCheck(fixture.Client, output, seed, RandomRuns.Scaled(new RandomWorkloadShape(PactFraction: pactFraction, UserAbortProbability: 0.01)));
}
