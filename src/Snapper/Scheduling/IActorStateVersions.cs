namespace Snapper.Scheduling;

/// <summary>
/// The versions of one actor's state that the PACT protocol moves between, called by <see cref="ActorSchedule"/>
/// under its lock: a batch that completes here leaves a version, a committed batch makes its version the
/// committed state, and a cascading abort drops every uncommitted version.
/// </summary>
internal interface IActorStateVersions
{
    void BatchCompleted(long bid);

    void BatchCommitted(long bid);

    void Reset();
}
