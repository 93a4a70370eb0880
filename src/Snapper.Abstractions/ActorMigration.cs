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
        var id = actor.GetGrainId();
        return grains.HelperOf(id).Migrate(id, worker);
    }

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

    /// <summary>The worker <paramref name="actor"/> lives on now.</summary>
    public static Task<int> WorkerOfAsync(this IGrainFactory grains, ITransactionalActor actor)
    {
        ArgumentNullException.ThrowIfNull(actor);
        var id = actor.GetGrainId();
        return grains.HelperOf(id).WorkerOf(id);
    }
}
