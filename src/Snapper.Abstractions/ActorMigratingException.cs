namespace Snapper;

/// <summary>
/// A new transaction reached an actor that is being moved to another worker (live migration). Nothing of it ran. The
/// client side of Snapper (<c>StartTxn</c>) submits the transaction again by itself until the actor serves from its new
/// silo, within <see cref="TransactionalActorExtensions.MigrationRetryBound"/>; a caller sees this only past that bound.
/// </summary>
[GenerateSerializer, Alias("snapper.actor-migrating")]
public sealed class ActorMigratingException : SnapperException
{
    /// <summary>Creates the exception.</summary>
    public ActorMigratingException(string actor)
        : base($"Actor {actor} is moving to another worker and takes no new transaction until it serves from there; submit it again.")
    {
        Actor = actor;
    }

    /// <summary>The actor being moved.</summary>
    [Id(0)] public string Actor { get; private set; }
}
