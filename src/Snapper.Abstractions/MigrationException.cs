namespace Snapper;

/// <summary>Why a migration request was refused or did not complete.</summary>
[GenerateSerializer]
public enum MigrationFailure
{
    /// <summary>The actor already lives on the worker named.</summary>
    SameWorker,

    /// <summary>The cluster has no worker of that index.</summary>
    UnknownWorker,

    /// <summary>Another migration of the same actor is under way.</summary>
    InProgress,

    /// <summary>The grain is not a transactional actor (only those are placed by Snapper).</summary>
    NotTransactionalActor,

    /// <summary>The silos are not a SnapperD cluster (an embedded silo places actors anywhere).</summary>
    NotClustered,

    /// <summary>
    /// The migration started but was rolled back: a worker did not answer, or the actor's work in flight did not end
    /// within the bound. The actor stays where it was, with every committed transaction.
    /// </summary>
    RolledBack,

    /// <summary>The actor's worker or the worker named is not up (down, or not started yet); nothing was tried.</summary>
    WorkerUnavailable,
}

/// <summary>A migration request was refused or rolled back; <see cref="Reason"/> says which. Nothing changed.</summary>
[GenerateSerializer, Alias("snapper.migration")]
public sealed class MigrationException : SnapperException
{
    /// <summary>Creates the exception.</summary>
    public MigrationException(string actor, MigrationFailure reason, string detail)
        : base($"Actor {actor} was not migrated ({reason}): {detail}")
    {
        Actor = actor;
        Reason = reason;
    }

    /// <summary>The actor of the request.</summary>
    [Id(0)] public string Actor { get; private set; }

    /// <summary>Why nothing changed.</summary>
    [Id(1)] public MigrationFailure Reason { get; private set; }
}
