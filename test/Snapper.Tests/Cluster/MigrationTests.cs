using Microsoft.Extensions.DependencyInjection;
using Snapper.Actors;
using Snapper.Tests.Actors;
using Xunit;
using Xunit.Abstractions;

namespace Snapper.Tests.Cluster;

/// <summary>A plain Orleans grain: not a transactional actor, so not something Snapper migrates.</summary>
public interface IPlainCounter : IGrainWithIntegerKey
{
    Task<int> Next();
}

public sealed class PlainCounter : Grain, IPlainCounter
{
    private int _count;

    public Task<int> Next() => Task.FromResult(++_count);
}

/// <summary>
/// Live migration on a master and two workers: an actor moves with its committed state and serves from its new worker,
/// back and forth; bad requests change nothing; a client calling a frozen actor waits and commits once; and under a load
/// of local and global ACTs and PACTs on the moving accounts, every acknowledged transfer is on both its accounts exactly
/// once, no aborted one on any, and money is conserved.
/// </summary>
[Collection(SnapperDCollection.Name)]
public sealed class MigrationTests(SnapperDFixture fixture, ITestOutputHelper output)
{
    private IBankAccount Account(long id) => fixture.Client.GetGrain<IBankAccount>(id);

    private Task<AccountState> SnapshotOf(long id) => Account(id).StartTxn(Account(id).Snapshot, 0, ActorAccessInfo.Of(Account(id)));

    private (TaskCompletionSource Frozen, TaskCompletionSource Release) HoldAfterFreeze(long id) => fixture.Hooks.HoldAfterFreeze(Account(id).GetGrainId());

    private bool ActiveOn(int worker, long id) => fixture.WorkerServices(worker).GetRequiredService<ActorDirectory>().Contains(Account(id).GetGrainId());

    [Fact]
    public async Task An_actor_moves_with_its_committed_state_serves_from_its_new_worker_and_moves_back()
    {
        var a = fixture.OnWorker(0, 1)[0];
        var b = fixture.OnWorker(1, 1)[0];
        await Account(a).StartTxn(Account(a).Reset, 100m);
        await Account(b).StartTxn(Account(b).Reset, 100m);
        await Account(a).StartTxn(Account(a).Transfer, new Transfer(1, b, 10m));

        await fixture.Client.MigrateAsync(Account(a), 1);
        Assert.Equal(1, await fixture.Client.WorkerOfAsync(Account(a)));
        Assert.True(ActiveOn(1, a));
        Assert.False(ActiveOn(0, a));
        var moved = await SnapshotOf(a);
        Assert.Equal(90m, moved.Balance);
        Assert.Equal([1L], moved.Applied);

        // Now local to worker 1 with b: an ACT and a PACT between them, then one back across workers after it returns.
        await Account(a).StartTxn(Account(a).Transfer, new Transfer(2, b, 5m));
        await Account(b).StartTxn(Account(b).Transfer, new Transfer(3, a, 1m), ActorAccessInfo.Of(Account(b), Account(a)));
        await fixture.Client.MigrateAsync(Account(a), 0);
        Assert.Equal(0, await fixture.Client.WorkerOfAsync(Account(a)));
        Assert.True(ActiveOn(0, a));
        await Account(a).StartTxn(Account(a).Transfer, new Transfer(4, b, 1m), ActorAccessInfo.Of(Account(a), Account(b)));

        Assert.Equal(90m - 5m + 1m - 1m, (await SnapshotOf(a)).Balance);
        Assert.Equal([1L, 2L, 3L, 4L], (await SnapshotOf(a)).Applied);
        Assert.Equal(100m + 10m + 5m - 1m + 1m, (await SnapshotOf(b)).Balance);
    }

    [Fact]
    public async Task A_late_message_about_an_older_move_leaves_the_actor_where_it_lives_now()
    {
        var a = fixture.OnWorker(0, 1)[0];
        var actor = Account(a).GetGrainId();
        await Account(a).StartTxn(Account(a).Reset, 100m);
        await fixture.Client.MigrateAsync(Account(a), 1);
        var movedAway = fixture.MasterServices.GetRequiredService<Migration.PlacementDirectory>().Version;
        await fixture.Client.MigrateAsync(Account(a), 0);

        // Both workers hear of the first move once more, after the move back (a helper sends a message again when the
        // first one timed out, and the first may still arrive). Neither takes it, and worker 0 keeps the activation.
        var grains = fixture.WorkerServices(0).GetRequiredService<IGrainFactory>();
        for (var worker = 0; worker < 2; worker++)
        {
            await grains.GetGrain<Migration.IWorkerMigrationGrain>(worker).Moved(actor, 1, movedAway);
            Assert.Equal(0, fixture.WorkerServices(worker).GetRequiredService<Snapper.Cluster.ActorPlacementMap>().WorkerOf(actor));
        }

        Assert.True(ActiveOn(0, a));

        // It serves from worker 0, well within the 30 s a client keeps retrying a moving actor.
        await Account(a).StartTxn(Account(a).Reset, 50m).WaitAsync(TimeSpan.FromSeconds(30));
        Assert.Equal(50m, (await SnapshotOf(a).WaitAsync(TimeSpan.FromSeconds(30))).Balance);
    }

    [Fact]
    public async Task A_late_hand_over_to_the_worker_an_actor_lives_on_changes_nothing_there()
    {
        var a = fixture.OnWorker(0, 1)[0];
        var actor = Account(a).GetGrainId();
        await Account(a).StartTxn(Account(a).Reset, 100m);
        await fixture.Client.MigrateAsync(Account(a), 1);
        await Account(a).StartTxn(Account(a).Reset, 70m);

        // The hand-over of an earlier migration to worker 1, rolled back when its helper stopped waiting for it, arrives
        // now that a later migration brought the actor there: refused, and the core serving the actor on worker 1 stays.
        var runtime = fixture.WorkerServices(1).GetRequiredService<SnapperRuntime>();
        var older = runtime.Serialize(new AccountState { Balance = 1m });
        var grains = fixture.WorkerServices(0).GetRequiredService<IGrainFactory>();
        await Assert.ThrowsAsync<MigrationException>(() =>
            grains.GetGrain<Migration.IWorkerMigrationGrain>(1).Accept(actor, Guid.NewGuid(), new Migration.MigratedState(older, older, false, 1)));
        Assert.True(ActiveOn(1, a));
        Assert.Equal(70m, (await SnapshotOf(a)).Balance);
    }

    [Fact]
    public async Task An_actor_whose_commit_acknowledgement_was_lost_sends_the_commit_again_and_then_migrates()
    {
        // An ACT from a (worker 0) to b (worker 1): b commits, but its acknowledgement is lost. b knows the outcome and
        // never asks, so a holds the commit open, and a migration of a waits for it (only worker 0 can answer for it).
        // After DecisionTimeout a sends the commit again, b acknowledges, and the migration goes through long before
        // the hand-over's bound (2 x ExecutionTimeout); without that, a would hold the commit for OutcomeRetention.
        var (a, b) = await TransferWithLostAcknowledgementAsync();
        await fixture.Client.MigrateAsync(Account(a), 1);
        Assert.Equal(1, await fixture.Client.WorkerOfAsync(Account(a)));
        Assert.Equal(90m, (await SnapshotOf(a)).Balance);
        Assert.Equal(110m, (await SnapshotOf(b)).Balance);
    }

    [Fact]
    public async Task A_hand_over_stops_waiting_for_work_in_flight_once_the_actor_is_released_from_its_freeze()
    {
        // a holds a commit that b never acknowledges (the acknowledgement is lost, and every repeat of the commit too), so
        // a hand-over of a waits. The freeze of a ends first (as when the master that froze it restarts): the hand-over
        // gives up at once, rather than waiting out its bound (2 x ExecutionTimeout) while new transactions reach a.
        var (a, b) = await TransferWithLostAcknowledgementAsync();
        var (actor, participant) = (Account(a).GetGrainId(), Account(b).GetGrainId());
        try
        {
            fixture.Hooks.WithholdActCommit = p => p == participant;
            var (frozen, release) = HoldAfterFreeze(a);
            var migration = fixture.Client.MigrateAsync(Account(a), 1);
            await frozen.Task.WaitAsync(TimeSpan.FromSeconds(30));
            var gate = fixture.WorkerServices(0).GetRequiredService<Snapper.Migration.MigrationGate>();
            foreach (var (moving, id) in gate.FrozenLongerThan(TimeSpan.FromMilliseconds(-1)).Where(f => f.Actor == actor)) // however recent
            {
                gate.Release(moving, id);
            }

            release.SetResult();
            var failure = await Assert.ThrowsAsync<MigrationException>(() => migration);
            output.WriteLine(failure.Message);
            Assert.Equal(MigrationFailure.RolledBack, failure.Reason);
            Assert.Contains("its freeze ended", failure.Message);
        }
        finally
        {
            fixture.Hooks.WithholdActCommit = null;
            fixture.Hooks.AfterMigrationFreeze = null;
        }

        Assert.Equal(0, await fixture.Client.WorkerOfAsync(Account(a)));
        Assert.Equal(90m, (await SnapshotOf(a)).Balance);
    }

    /// <summary>
    /// Funds a (worker 0) and b (worker 1) with 100 and moves 10 from a to b with an ACT whose commit b applies but whose
    /// acknowledgement is lost: b knows the outcome and never asks, so a holds the commit open.
    /// </summary>
    private async Task<(long A, long B)> TransferWithLostAcknowledgementAsync()
    {
        var a = fixture.OnWorker(0, 1)[0];
        var b = fixture.OnWorker(1, 1)[0];
        await Account(a).StartTxn(Account(a).Reset, 100m);
        await Account(b).StartTxn(Account(b).Reset, 100m);
        var participant = Account(b).GetGrainId();
        fixture.Hooks.DropActCommitAcknowledgement = p => p == participant;
        try
        {
            await Account(a).StartTxn(Account(a).Transfer, new Transfer(1, b, 10m));
        }
        finally
        {
            fixture.Hooks.DropActCommitAcknowledgement = null;
        }

        return (a, b);
    }

    [Fact]
    public async Task Bad_requests_are_refused_with_their_reason_and_change_nothing()
    {
        var a = fixture.OnWorker(0, 1)[0];
        await Account(a).StartTxn(Account(a).Reset, 7m);

        Assert.Equal(MigrationFailure.SameWorker, (await Assert.ThrowsAsync<MigrationException>(() => fixture.Client.MigrateAsync(Account(a), 0))).Reason);
        Assert.Equal(MigrationFailure.UnknownWorker, (await Assert.ThrowsAsync<MigrationException>(() => fixture.Client.MigrateAsync(Account(a), 2))).Reason);
        Assert.Equal(MigrationFailure.UnknownWorker, (await Assert.ThrowsAsync<MigrationException>(() => fixture.Client.MigrateAsync(Account(a), -1))).Reason);
        var plain = fixture.Client.GetGrain<IPlainCounter>(ClusterFixture.NewId()).GetGrainId();
        Assert.Equal(MigrationFailure.NotTransactionalActor,
            (await Assert.ThrowsAsync<MigrationException>(() => fixture.Client.HelperOf(plain).Migrate(plain, 1))).Reason);

        // A second request for an actor whose migration is under way (held after its freeze) is refused, not queued.
        var (frozen, release) = HoldAfterFreeze(a);
        try
        {
            var first = fixture.Client.MigrateAsync(Account(a), 1);
            await frozen.Task.WaitAsync(TimeSpan.FromSeconds(30));
            Assert.Equal(MigrationFailure.InProgress, (await Assert.ThrowsAsync<MigrationException>(() => fixture.Client.MigrateAsync(Account(a), 1))).Reason);
            release.SetResult();
            await first;
        }
        finally
        {
            fixture.Hooks.AfterMigrationFreeze = null;
        }

        Assert.Equal(1, await fixture.Client.WorkerOfAsync(Account(a)));
        Assert.Equal(7m, (await SnapshotOf(a)).Balance);

        // The internal entry points of a migration are closed to clients.
        var entry = fixture.Client.GetGrain<Snapper.Migration.IMigratingActor>(Account(a).GetGrainId());
        await Assert.ThrowsAsync<SnapperEntryPointException>(() => entry.HandOver(default, TimeSpan.FromSeconds(1)));
        await Assert.ThrowsAsync<SnapperEntryPointException>(() => entry.Leave(new Snapper.Actors.SiloStamp(fixture.Cluster.Silos[0].SiloAddress, Guid.NewGuid())));
    }

    [Fact]
    public async Task A_client_calling_a_frozen_actor_waits_and_commits_once_it_serves_from_its_new_worker()
    {
        var a = fixture.OnWorker(0, 1)[0];
        var b = fixture.OnWorker(0, 1)[0];
        var c = fixture.OnWorker(1, 1)[0];
        foreach (var id in new[] { a, b, c })
        {
            await Account(id).StartTxn(Account(id).Reset, 50m);
        }

        var (frozen, release) = HoldAfterFreeze(a);
        try
        {
            var migration = fixture.Client.MigrateAsync(Account(a), 1);
            await frozen.Task.WaitAsync(TimeSpan.FromSeconds(30));

            // While a is frozen: an ACT starting on it, a PACT starting on it, and a PACT from b that declares it (held in
            // ordering) and one from c across workers (held by the master). None may run before the move completes.
            // The ACT may still give way to the held PACTs once they run (a hybrid abort, not a migration one): it is
            // submitted with a retry policy, as a client mixing ACTs and PACTs would.
            var act = Account(a).StartTxn(Account(a).Transfer, new Transfer(11, b, 1m), new RetryPolicy { MaxAttempts = 20 });
            var pactOnA = Account(a).StartTxn(Account(a).Transfer, new Transfer(12, c, 1m), ActorAccessInfo.Of(Account(a), Account(c)));
            var localPact = Account(b).StartTxn(Account(b).Transfer, new Transfer(13, a, 2m), ActorAccessInfo.Of(Account(b), Account(a)));
            var globalPact = Account(c).StartTxn(Account(c).Transfer, new Transfer(14, a, 3m), ActorAccessInfo.Of(Account(c), Account(a)));
            var unrelated = Account(b).StartTxn(Account(b).Transfer, new Transfer(15, c, 4m), ActorAccessInfo.Of(Account(b), Account(c)));

            // Other actors' PACTs keep flowing while a is frozen.
            await unrelated.WaitAsync(TimeSpan.FromSeconds(30));
            Assert.Equal([15L], (await SnapshotOf(b)).Applied);
            Assert.False(act.IsCompleted || pactOnA.IsCompleted || localPact.IsCompleted || globalPact.IsCompleted);

            release.SetResult();
            await migration;
            await Task.WhenAll(act, pactOnA, localPact, globalPact).WaitAsync(TimeSpan.FromSeconds(60));
        }
        finally
        {
            fixture.Hooks.AfterMigrationFreeze = null;
            release.TrySetResult();
        }

        var after = await SnapshotOf(a);
        Assert.Equal(50m - 1m - 1m + 2m + 3m, after.Balance);
        Assert.Equal([11L, 12L, 13L, 14L], after.Applied.Order());
        Assert.Equal(1, await fixture.Client.WorkerOfAsync(Account(a)));
    }

    [Fact]
    public async Task Under_a_load_of_acts_and_pacts_every_acknowledged_transfer_is_applied_exactly_once_while_accounts_move()
    {
        const int Accounts = 8;
        var ids = fixture.OnWorker(0, Accounts / 2).Concat(fixture.OnWorker(1, Accounts / 2)).ToArray();
        await using var load = await TransferLoad.StartAsync(fixture.Client, ids, 1_000m);

        // Half the accounts go to the other worker and back, three times over, while the clients run.
        var movers = ids.Where((_, i) => i % 2 == 0).ToArray();
        var moves = 0;
        var durations = new List<double>();
        for (var round = 0; round < 3; round++)
        {
            foreach (var id in movers)
            {
                var there = await fixture.Client.WorkerOfAsync(Account(id));
                var started = System.Diagnostics.Stopwatch.GetTimestamp();
                await fixture.Client.MigrateAsync(Account(id), 1 - there);
                durations.Add(System.Diagnostics.Stopwatch.GetElapsedTime(started).TotalMilliseconds);
                moves++;
            }
        }

        durations.Sort();
        output.WriteLine($"migration time under load: p50 {durations[durations.Count / 2]:0.0} ms, max {durations[^1]:0.0} ms");
        output.WriteLine($"{moves} migrations, " + await load.StopAndCheckAsync(Accounts * 1_000m));
    }

    [Theory]
    [InlineData(91, 0.5)]
    [InlineData(92, 0.9)]
    public Task Random_hybrid_histories_stay_serializable_while_their_hot_actors_move_back_and_forth(int seed, double pactFraction) =>
        Serializability.RandomRuns.RunAndCheck(fixture.Client, output, seed, Serializability.RandomRuns.Hybrid(pactFraction),
            (hot, ended) => MigrationLoad.MoveBackAndForthAsync(fixture.Client, output, [.. hot.Select(id => (ITransactionalActor)fixture.Client.GetGrain<Serializability.IHistoryActor>(id))], seed, ended));

    /// <summary>The same with key-value actors at key level (keys on 8-key actors; the actors of the hot keys move).</summary>
    [Theory]
    [InlineData(93, 0.5)]
    public Task Random_key_level_histories_stay_serializable_while_their_hot_actors_move_back_and_forth(int seed, double pactFraction) =>
        Serializability.RandomRuns.RunAndCheck(fixture.Client, output, seed, Serializability.RandomRuns.Hybrid(pactFraction) with { Keyed = true, KeyLevel = true },
            (hot, ended) => MigrationLoad.MoveBackAndForthAsync(fixture.Client, output,
                [.. hot.Select(id => Serializability.KeyedHistoryActor.Locate(id).Grain).Distinct()
                    .Select(grain => (ITransactionalActor)fixture.Client.GetGrain<Serializability.IKeyedHistoryActor>(grain))], seed, ended));
}
