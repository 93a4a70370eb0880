namespace Snapper;

/// <summary>
/// Snapper's migration helpers (thesis §4.3): grains on the master, each owning a hash share of the actors, that move a
/// transactional actor of a SnapperD cluster to another worker while transactions keep running. Call them through
/// <see cref="ActorMigration.MigrateAsync(IGrainFactory, ITransactionalActor, int)"/>.
/// </summary>
[Alias("snapper.migration-helper")]
public interface IMigrationHelper : IGrainWithIntegerKey
{
    /// <summary>Moves <paramref name="actor"/> to worker <paramref name="worker"/>; returns once it serves from there.</summary>
    /// <exception cref="MigrationException">The request was refused or rolled back; nothing changed.</exception>
    [Alias("migrate")]
    Task Migrate(GrainId actor, int worker);

    /// <summary>The worker <paramref name="actor"/> lives on now.</summary>
    [Alias("worker-of")]
    Task<int> WorkerOf(GrainId actor);

    /// <summary>The workers that are up now, by index (none on an embedded silo).</summary>
    [Alias("workers")]
    Task<int[]> Workers();

    /// <summary>The transactional actors that have been active on worker <paramref name="worker"/> and live there now.</summary>
    [Alias("actors-on")]
    Task<GrainId[]> ActorsOn(int worker);
}

/// <summary>Live migration of transactional actors between the workers of a SnapperD cluster.</summary>
public static class ActorMigration
{
    /// <summary>Helpers the actors are shared among (by the hash of their id); each moves one actor of its share at a time.</summary>
    public const int Helpers = 8;

    /// <summary>The helper that owns <paramref name="actor"/>'s migrations.</summary>
    public static IMigrationHelper HelperOf(this IGrainFactory grains, GrainId actor) =>
        grains.GetGrain<IMigrationHelper>(actor.GetUniformHashCode() % Helpers);

    /// <summary>
    /// Moves <paramref name="actor"/> to worker <paramref name="worker"/> while transactions keep running: the actor takes
    /// no new transaction while it moves (a client's <c>StartTxn</c> waits and resubmits by itself), PACTs that declare it
    /// are held back and then ordered to its new worker, the work it had in flight commits first, and its newest committed
    /// state is logged on the new worker before it serves from there. Returns once it serves from its new silo.
    /// </summary>
    /// <exception cref="MigrationException">Refused (same worker, unknown worker, a migration of it under way, not a
    /// cluster) or rolled back (the actor stays where it was with every committed transaction).</exception>
    public static Task MigrateAsync(this IGrainFactory grains, ITransactionalActor actor, int worker)
    {
        ArgumentNullException.ThrowIfNull(actor);
        return grains.MigrateAsync(actor.GetGrainId(), worker);
    }

    /// <summary>Moves the actor of id <paramref name="actor"/> to worker <paramref name="worker"/>; see <see cref="MigrateAsync(IGrainFactory, ITransactionalActor, int)"/>.</summary>
    public static Task MigrateAsync(this IGrainFactory grains, GrainId actor, int worker) => grains.HelperOf(actor).Migrate(actor, worker);

    /// <summary>
    /// Moves many actors (each to its worker), several at a time: the helpers of different shares work side by side.
    /// Every migration is attempted; if any failed, an <see cref="AggregateException"/> of their
    /// <see cref="MigrationException"/>s follows once all ended.
    /// </summary>
    public static async Task MigrateAsync(this IGrainFactory grains, IEnumerable<(ITransactionalActor Actor, int Worker)> moves)
    {
        ArgumentNullException.ThrowIfNull(moves);
        var all = Task.WhenAll(moves.Select(move => grains.MigrateAsync(move.Actor, move.Worker)));
        try
        {
            await all;
        }
        catch when (all.Exception is { InnerExceptions.Count: > 1 } several)
        {
            throw several;
        }
    }

    /// <summary>The workers of the cluster that are up now, by index.</summary>
    public static async Task<IReadOnlyList<int>> WorkersUpAsync(this IGrainFactory grains) => await grains.GetGrain<IMigrationHelper>(0).Workers();

    /// <summary>The transactional actors that have been active on worker <paramref name="worker"/> and live there now.</summary>
    public static async Task<IReadOnlyList<GrainId>> ActorsOnAsync(this IGrainFactory grains, int worker) => await grains.GetGrain<IMigrationHelper>(0).ActorsOn(worker);

    /// <summary>
    /// Spreads the actors evenly over the workers that are up: reads each worker's actors (<see cref="ActorsOnAsync"/>),
    /// plans the fewest moves that leave every worker within one actor of the others (<see cref="RebalancePlan"/>), and
    /// migrates them while transactions keep running, <see cref="RebalanceOptions.Parallelism"/> at a time. A move that
    /// fails is reported, not retried; the others go on.
    /// </summary>
    public static async Task<RebalanceResult> RebalanceAsync(this IGrainFactory grains, RebalanceOptions? options = null, CancellationToken cancellationToken = default)
    {
        options ??= new RebalanceOptions();
        var workers = options.Workers ?? await grains.WorkersUpAsync();
        var hosted = new Dictionary<int, IReadOnlyList<GrainId>>();
        foreach (var worker in workers)
        {
            hosted[worker] = await grains.ActorsOnAsync(worker);
        }

        var plan = RebalancePlan.Plan(hosted);
        var moved = new System.Collections.Concurrent.ConcurrentBag<MigrationTiming>();
        var failed = new System.Collections.Concurrent.ConcurrentBag<MigrationException>();
        await Parallel.ForEachAsync(plan, new ParallelOptions { MaxDegreeOfParallelism = options.Parallelism, CancellationToken = cancellationToken }, async (move, _) =>
        {
            var started = System.Diagnostics.Stopwatch.GetTimestamp();
            try
            {
                await grains.MigrateAsync(move.Actor, move.To);
                var timing = new MigrationTiming(move, System.Diagnostics.Stopwatch.GetElapsedTime(started));
                moved.Add(timing);
                options.OnMoved?.Invoke(timing);
            }
            catch (MigrationException exception)
            {
                failed.Add(exception);
            }
        });

        return new RebalanceResult(plan, [.. moved], [.. failed]);
    }

    /// <summary>The worker <paramref name="actor"/> lives on now.</summary>
    public static Task<int> WorkerOfAsync(this IGrainFactory grains, ITransactionalActor actor)
    {
        ArgumentNullException.ThrowIfNull(actor);
        var id = actor.GetGrainId();
        return grains.HelperOf(id).WorkerOf(id);
    }
}

/// <summary>How <see cref="ActorMigration.RebalanceAsync"/> runs.</summary>
public sealed class RebalanceOptions
{
    /// <summary>Migrations under way at once. Default: one per migration helper.</summary>
    public int Parallelism { get; init; } = ActorMigration.Helpers;

    /// <summary>The workers to spread the actors over; default: every worker that is up.</summary>
    public IReadOnlyList<int>? Workers { get; init; }

    /// <summary>Called after each move that completed (from the task that made it).</summary>
    public Action<MigrationTiming>? OnMoved { get; init; }
}

/// <summary>One planned move of a rebalance.</summary>
public readonly record struct ActorMove(GrainId Actor, int From, int To);

/// <summary>A move that completed, and how long its migration took as the caller saw it.</summary>
public readonly record struct MigrationTiming(ActorMove Move, TimeSpan Elapsed);

/// <summary>What a rebalance planned, moved and could not move.</summary>
public sealed record RebalanceResult(IReadOnlyList<ActorMove> Planned, IReadOnlyList<MigrationTiming> Moved, IReadOnlyList<MigrationException> Failed);

/// <summary>The moves that spread actors evenly over workers.</summary>
public static class RebalancePlan
{
    /// <summary>
    /// The fewest moves after which every worker of <paramref name="hosted"/> hosts the same number of actors, or one
    /// more: each worker's share is the total divided by the workers, the remainder going to those that hold the most
    /// already; a worker above its share gives the actors listed last, and the one furthest below its share receives
    /// first. Deterministic for the same input.
    /// </summary>
    public static IReadOnlyList<ActorMove> Plan(IReadOnlyDictionary<int, IReadOnlyList<GrainId>> hosted)
    {
        ArgumentNullException.ThrowIfNull(hosted);
        if (hosted.Count == 0)
        {
            return [];
        }

        var total = hosted.Values.Sum(actors => actors.Count);
        var byLoad = hosted.Keys.OrderByDescending(w => hosted[w].Count).ThenBy(w => w).ToArray();
        var share = new Dictionary<int, int>();
        for (var i = 0; i < byLoad.Length; i++)
        {
            share[byLoad[i]] = total / byLoad.Length + (i < total % byLoad.Length ? 1 : 0);
        }

        var surplus = new Queue<(GrainId Actor, int From)>(byLoad
            .Where(w => hosted[w].Count > share[w])
            .SelectMany(w => hosted[w].Skip(share[w]).Select(actor => (actor, w))));
        var moves = new List<ActorMove>(surplus.Count);
        foreach (var receiver in byLoad.Reverse().Where(w => hosted[w].Count < share[w]))
        {
            for (var missing = share[receiver] - hosted[receiver].Count; missing > 0; missing--)
            {
                var (actor, from) = surplus.Dequeue();
                moves.Add(new ActorMove(actor, from, receiver));
            }
        }

        return moves;
    }
}
