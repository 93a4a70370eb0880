using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Orleans.Concurrency;
using Orleans.Metadata;
using Snapper.Cluster;
using Snapper.Hosting;

namespace Snapper.Migration;

/// <summary>
/// A migration helper (thesis §4.3, Fig. 4.8): on the master, it moves the actors of its hash share between workers,
/// several at a time. One migration of an actor X from worker S to worker T:
/// <list type="number">
/// <item>Freeze X everywhere: the master emits no global batch declaring X (they wait), every worker emits no local batch
/// declaring X, and S admits no new transaction on X (clients resubmit by themselves). Other actors' PACTs keep flowing.</item>
/// <item>Drain on S: the global parts the master sent S before the freeze are merged, then X's work in flight (its PACT
/// batches, its ACTs, commits its participants have not acknowledged) ends; X's newest committed state is taken.</item>
/// <item>T logs that state as a committed version of X and keeps it for X's activation.</item>
/// <item>Commit: the master's placement directory says X lives on T (durable). Before this step a failure rolls back
/// (X stays on S with every committed transaction); after it, the migration completes.</item>
/// <item>Every worker learns the move; S's activation of X leaves by Orleans' migration (its state rides along, the same
/// T logged), and X activates on T.</item>
/// <item>Once X answers from T, release the freeze: held PACTs are ordered, by the new placement.</item>
/// </list>
/// <para>
/// An actor is never active on two workers: S's own map flips before its activation leaves, so Orleans places the new
/// activation on T, and an activation request that reaches a worker whose map says the actor lives elsewhere is refused.
/// A worker left frozen by a helper that died (the master crashed) releases the freeze after a bound, once it has the
/// master's directory (<see cref="MigrationDirectoryRefresher"/>).
/// </para>
/// <para>
/// Workers that are not up (a worker declared for scaling out and not started yet, or one that is down) take no part:
/// they order nothing, and a worker reads the master's directory when it starts, before any actor activates on it
/// (<see cref="PlacementDirectory.WhenReadAsync"/>). The actor's own worker and the target must be up.
/// </para>
/// </summary>
[Reentrant, MasterPlacement]
internal sealed class MigrationHelperGrain(
    ActorPlacementMap map, ClusterRoster roster, PlacementDirectory directory, GlobalPactService global, GrainClassMap classes,
    IOptions<SnapperOptions> options, SnapperTestHooks testHooks, Actors.SiloCallKeys callKeys, ILogger<MigrationHelperGrain> logger) : Grain, IMigrationHelper
{
    // An actor's migrations all go to the helper of its share (ActorMigration.HelperOf), so this helper's set is the
    // cluster's (the grain is reentrant, but its turns do not overlap).
    private readonly HashSet<GrainId> _inProgress = [];
    private readonly SnapperOptions _options = options.Value;

    public Task<int> WorkerOf(GrainId actor) => Task.FromResult(map.WorkerOf(actor));

    public Task<int[]> Workers() => Task.FromResult(WorkersUp());

    public async Task<GrainId[]> ActorsOn(int worker)
    {
        if (worker < 0 || worker >= map.Workers)
        {
            throw new ArgumentOutOfRangeException(nameof(worker), worker, $"The cluster has workers 0 to {map.Workers - 1}.");
        }

        if (!map.Clustered || roster.WorkerSilo(worker) is null)
        {
            return [];
        }

        return await GrainFactory.GetGrain<IWorkerMigrationGrain>(worker).Actors().WaitAsync(_options.ExecutionTimeout);
    }

    private int[] WorkersUp() => map.Clustered
        ? [.. Enumerable.Range(0, map.Workers).Where(w => roster.WorkerSilo(w) is not null)]
        : [];

    public async Task Migrate(GrainId actor, int worker)
    {
        var name = actor.ToString();
        if (!map.Clustered)
        {
            throw new MigrationException(name, MigrationFailure.NotClustered, "an embedded silo places actors anywhere; migration moves actors between the workers of a SnapperD cluster.");
        }

        if (worker < 0 || worker >= map.Workers)
        {
            throw new MigrationException(name, MigrationFailure.UnknownWorker, $"the cluster has workers 0 to {map.Workers - 1}.");
        }

        if (!classes.TryGetGrainClass(actor.Type, out var grainClass) || !Actors.TransactionalActorClassCheck.IsTransactionalActorClass(grainClass))
        {
            throw new MigrationException(name, MigrationFailure.NotTransactionalActor, $"grain type {actor.Type} is not a TransactionalActor or KeyValueActor.");
        }

        var source = map.WorkerOf(actor);
        if (source == worker)
        {
            throw new MigrationException(name, MigrationFailure.SameWorker, $"it already lives on worker {worker}.");
        }

        if (roster.WorkerSilo(source) is null || roster.WorkerSilo(worker) is null)
        {
            throw new MigrationException(name, MigrationFailure.WorkerUnavailable,
                $"{(roster.WorkerSilo(worker) is null ? $"worker {worker}" : $"its worker {source}")} is not up (down, or not started yet).");
        }

        if (!_inProgress.Add(actor))
        {
            throw new MigrationException(name, MigrationFailure.InProgress, "another migration of it is under way.");
        }

        try
        {
            await MigrateAsync(actor, source, worker);
        }
        finally
        {
            _inProgress.Remove(actor);
        }
    }

    private async Task MigrateAsync(GrainId actor, int source, int target)
    {
        var migration = Guid.NewGuid();
        var bound = _options.ExecutionTimeout;
        var started = System.Diagnostics.Stopwatch.GetTimestamp();
        var workers = Enumerable.Range(0, map.Workers).Select(w => GrainFactory.GetGrain<IWorkerMigrationGrain>(w)).ToArray();
        // Workers that are up now are frozen (and released); the others order nothing until they have read the directory.
        var frozen = WorkersUp().Select(w => workers[w]).ToArray();
        try
        {
            var sentToSource = global.Freeze(actor, migration, source);
            await Task.WhenAll(frozen.Select(w => w.Freeze(actor, migration, directory.Incarnation))).WaitAsync(bound);
            if (testHooks.AfterMigrationFreeze?.Invoke(actor) is { } held)
            {
                await held;
            }

            // Work in flight ends within ExecutionTimeout (a batch or ACT running longer is aborted by its own watchdog),
            // so twice that is enough for it to end either way.
            var state = await workers[source].HandOver(actor, sentToSource, 2 * bound).WaitAsync(3 * bound);
            await workers[target].Accept(actor, migration, state).WaitAsync(bound);
        }
        catch (Exception exception)
        {
            await ReleaseEverywhereAsync(actor, migration, frozen);
            await Ignore(workers[target].Drop(actor, migration));
            logger.LogWarning(exception, "Migration of {Actor} from worker {Source} to {Target} rolled back", actor, source, target);
            throw exception as MigrationException
                ?? new MigrationException(actor.ToString(), MigrationFailure.RolledBack, $"{exception.GetType().Name}: {exception.Message}");
        }

        // The commit point: from here on the migration completes whatever fails.
        var version = directory.Commit(actor, target);
        // The old worker last: its part lets the activation go, and the new one must be placed on a worker that already
        // knows it lives there (an activation on a worker whose map says otherwise is refused, and Orleans' migration of
        // the activation would fail and stall the calls waiting for it).
        // Every worker up now, which includes any that started since the freeze (it may have read the directory before
        // the commit); source and target in any case.
        var told = new List<IWorkerMigrationGrain>();
        var tell = WorkersUp().Append(target).Where(w => w != source).Distinct().Select(w => workers[w]).Append(workers[source]);
        foreach (var worker in tell)
        {
            if (await Persist(() => worker.Moved(actor, target, version), $"tell a worker that {actor} moved"))
            {
                told.Add(worker);
            }
        }

        await Persist(async () =>
        {
            var serving = await GrainFactory.GetGrain<IMigratingActor>(actor).WorkerIndex(callKeys.Own);
            if (serving != target)
            {
                throw new SnapperException($"{actor} still answers from worker {serving}");
            }
        }, $"see {actor} serve from worker {target}");

        // Only workers that learned the move are released: one that did not stays frozen until it has read the master's
        // directory (MigrationDirectoryRefresher), so it never orders the actor by its old place.
        await ReleaseEverywhereAsync(actor, migration, [.. told]);
        logger.LogInformation("Actor {Actor} migrated from worker {Source} to worker {Target} in {Elapsed:0.0} ms", actor, source, target,
            System.Diagnostics.Stopwatch.GetElapsedTime(started).TotalMilliseconds);
    }

    private async Task ReleaseEverywhereAsync(GrainId actor, Guid migration, IWorkerMigrationGrain[] workers)
    {
        global.Release(actor, migration);
        await Task.WhenAll(workers.Select(w => Ignore(w.Release(actor, migration))));
    }

    /// <summary>
    /// Retries a step after the commit point until it succeeds or ExecutionTimeout passed; then logs it and says so. A
    /// worker that missed the move catches up from the master's directory, and only then releases its freeze.
    /// </summary>
    private async Task<bool> Persist(Func<Task> step, string what)
    {
        var deadline = Environment.TickCount64 + (long)_options.ExecutionTimeout.TotalMilliseconds;
        for (var pause = 5; ; pause = Math.Min(pause * 2, 500))
        {
            try
            {
                await step().WaitAsync(_options.ExecutionTimeout);
                return true;
            }
            catch (Exception exception) when (Environment.TickCount64 < deadline)
            {
                logger.LogDebug(exception, "Could not {What} yet; retrying", what);
                await Task.Delay(pause);
            }
            catch (Exception exception)
            {
                logger.LogError(exception, "Could not {What} within {Bound}", what, _options.ExecutionTimeout);
                return false;
            }
        }
    }

    private static async Task Ignore(Task task)
    {
        try
        {
            await task;
        }
        catch
        {
            // Best effort on the way back: a worker that did not hear it releases the freeze when it expires.
        }
    }
}
