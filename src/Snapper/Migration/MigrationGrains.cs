using Microsoft.Extensions.Logging;
using Orleans.Concurrency;
using Snapper.Actors;
using Snapper.Cluster;
using Snapper.Logging;
using Snapper.Pact;

namespace Snapper.Migration;

/// <summary>A worker's side of migrations (key = worker index, on that worker); called by the migration helpers.</summary>
internal interface IWorkerMigrationGrain : IGrainWithIntegerKey
{
    /// <summary>
    /// Freezes the actor in this worker's ordering and, on its own worker, for new transactions, for a migration of the
    /// master process <paramref name="incarnation"/> (<see cref="PlacementDirectory.Incarnation"/>).
    /// </summary>
    Task Freeze(GrainId actor, Guid migration, Guid incarnation);

    /// <summary>Ends the freeze of migration <paramref name="migration"/> (committed or rolled back).</summary>
    Task Release(GrainId actor, Guid migration);

    /// <summary>
    /// On the actor's old worker: waits until the global parts up to <paramref name="mergedUpTo"/> are merged and the
    /// actor's work in flight committed, then returns its newest committed state.
    /// </summary>
    Task<MigratedState> HandOver(GrainId actor, long mergedUpTo, TimeSpan bound);

    /// <summary>On the new worker: logs the actor's state as a committed version (durable before this returns) and keeps it for its activation.</summary>
    Task Accept(GrainId actor, Guid migration, MigratedState state);

    /// <summary>On the new worker, when a migration is rolled back: forgets the state <see cref="Accept"/> kept (or will keep).</summary>
    Task Drop(GrainId actor, Guid migration);

    /// <summary>
    /// The master committed the move (directory version <paramref name="version"/>); a worker whose map then says the actor
    /// lives elsewhere lets its activation there go (the old worker).
    /// </summary>
    Task Moved(GrainId actor, int worker, long version);

    /// <summary>The transactional actors that have been active on this worker and live here now.</summary>
    Task<GrainId[]> Actors();
}

/// <summary>The master's placement directory, for a silo that starts (or missed a migration) to catch up.</summary>
internal interface IPlacementDirectoryGrain : IGrainWithIntegerKey
{
    Task<DirectorySnapshot> Snapshot();
}

/// <summary>
/// The actor's side of a migration; internal, called only from silos: each message carries the sending silo's stamp, and
/// the actor refuses one without it (see <see cref="Actors.SiloCallKeys"/>).
/// </summary>
internal interface IMigratingActor : IGrain
{
    /// <summary>Once nothing of the actor is in flight (within <paramref name="bound"/>), its newest committed state.</summary>
    Task<MigratedState> HandOver(Actors.SiloStamp sender, TimeSpan bound);

    /// <summary>On the old worker: the activation stops serving and leaves (Orleans' migration); elsewhere nothing.</summary>
    Task Leave(Actors.SiloStamp sender);

    /// <summary>The worker the activation serving the call runs on (a call that activates the actor where it lives).</summary>
    Task<int> WorkerIndex(Actors.SiloStamp sender);
}

[Reentrant, KeepAlive, WorkerPlacement]
internal sealed class WorkerMigrationGrain(
    PactService pacts, MigrationGate gate, MigrationInbox inbox, PlacementDirectory directory, ActorDirectory actors,
    ActorPlacementMap map, WriteAheadLog log, Coordination.ActTidSource tids, SiloCallKeys callKeys, ILogger<WorkerMigrationGrain> logger) : SnapperSystemGrain, IWorkerMigrationGrain
{
    public Task Freeze(GrainId actor, Guid migration, Guid incarnation)
    {
        pacts.Freeze(actor, migration, incarnation);
        return Task.CompletedTask;
    }

    public Task Release(GrainId actor, Guid migration)
    {
        gate.Release(actor, migration);
        return Task.CompletedTask;
    }

    public async Task<MigratedState> HandOver(GrainId actor, long mergedUpTo, TimeSpan bound)
    {
        if (!await pacts.WhenGlobalMergedUpToAsync(mergedUpTo, bound))
        {
            throw new MigrationException(actor.ToString(), MigrationFailure.RolledBack,
                $"global PACT batches up to {mergedUpTo} did not reach worker {this.GetPrimaryKeyLong()} within {bound}.");
        }

        return await GrainFactory.GetGrain<IMigratingActor>(actor).HandOver(callKeys.Own, bound);
    }

    public async Task Accept(GrainId actor, Guid migration, MigratedState state)
    {
        // A migration to this worker is accepted while the actor lives elsewhere (the move commits after this). One that
        // finds it living here came late: its migration was rolled back (its helper stopped waiting for this call) and a
        // later one brought the actor here. Taken, it would forget the core that serves the actor here now, and the next
        // activation would start from this older state.
        var self = (int)this.GetPrimaryKeyLong();
        if (map.WorkerOf(actor) == self)
        {
            throw new MigrationException(actor.ToString(), MigrationFailure.RolledBack, $"it lives on worker {self} already; this hand-over arrived after its migration ended.");
        }

        // A core left from an earlier stay here is stale: the actor's next activation here starts from this state.
        actors.Remove(actor);
        if (log.Enabled)
        {
            // A committed version of the actor in this worker's log, of the seq it had: recovery here finds it even if
            // this silo restarts before the actor serves, and it outranks every older record of the actor here.
            var tid = await tids.NextAsync();
            await log.AppendCommitAsync(tid, awaitingAcks: false,
                [LogRecord.StateWritten(LoggedTxnKind.Act, tid, actor, state.Seq, new LoggedState(state.LogPayload, state.Incremental)), LogRecord.Committed(LoggedTxnKind.Act, tid)]);
        }

        inbox.Put(actor, migration, state);
    }

    public Task Drop(GrainId actor, Guid migration)
    {
        inbox.Drop(actor, migration);
        return Task.CompletedTask;
    }

    public Task<GrainId[]> Actors()
    {
        var self = (int)this.GetPrimaryKeyLong();
        return Task.FromResult(actors.Actors.Where(actor => map.WorkerOf(actor) == self).ToArray());
    }

    public async Task Moved(GrainId actor, int worker, long version)
    {
        directory.Apply(actor, worker, version);

        // By the map as it reads now, not by the message: a late message about an older move is not taken (the actor may
        // live here again since), and a move this silo learned from the master's whole copy before this message still
        // makes the activation here leave.
        var now = map.WorkerOf(actor);
        if (actors.Contains(actor) && now != this.GetPrimaryKeyLong())
        {
            // The actor's activation here (if any) leaves by Orleans' migration, and the new one starts on its new worker
            // (this silo's map already says so); with none here, the call activates it there, which is harmless.
            await GrainFactory.GetGrain<IMigratingActor>(actor).Leave(callKeys.Own);
            actors.Remove(actor);
            logger.LogInformation("Actor {Actor} moved to worker {Worker}", actor, now);
        }
    }
}

[Reentrant, KeepAlive, MasterPlacement]
internal sealed class PlacementDirectoryGrain(PlacementDirectory directory) : SnapperSystemGrain, IPlacementDirectoryGrain
{
    public Task<DirectorySnapshot> Snapshot() => Task.FromResult(directory.Snapshot());
}
