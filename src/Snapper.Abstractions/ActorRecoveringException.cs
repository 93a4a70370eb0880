namespace Snapper;

/// <summary>
/// A transactional actor cannot serve yet: its silo restarted, and the actor's state depends on the outcome of a
/// transaction decided on another silo (its first actor's worker, or the master for a PACT spanning workers) that has
/// not answered yet. Nothing of the transaction that needed it ran on it; retry once that silo is reachable.
/// </summary>
[GenerateSerializer, Alias("snapper.actor-recovering")]
public sealed class ActorRecoveringException : SnapperException
{
    /// <summary>Creates the exception.</summary>
    public ActorRecoveringException(string actor, string detail)
        : base($"Actor {actor} is still recovering: {detail}")
    {
        Actor = actor;
    }

    /// <summary>The actor that is recovering.</summary>
    [Id(0)] public string Actor { get; private set; }
}
