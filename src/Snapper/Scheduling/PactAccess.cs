namespace Snapper.Scheduling;

/// <summary>
/// One PACT of a sub-batch, as an actor's schedule sees it: its tid, how often it declared to call the actor, and the
/// keys it declared there (null: the actor whole).
/// </summary>
internal readonly record struct PactAccess(long Tid, int Accesses, IReadOnlySet<object>? Keys = null)
{
    public static implicit operator PactAccess((long Tid, int Accesses) pact) => new(pact.Tid, pact.Accesses);
}
