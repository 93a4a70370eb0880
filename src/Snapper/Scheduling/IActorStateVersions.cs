namespace Snapper.Scheduling;

/// <summary>
/// The versions of one actor's state that the PACT protocol moves between, called by <see cref="ActorSchedule"/>
/// under its lock: a batch that completes here leaves a version, a committed batch makes its version the
/// committed state, and a cascading abort drops every uncommitted version.
/// </summary>
internal interface IActorStateVersions
{
    /// <summary>Keeps the version the batch left; returns it with its seq, or (null, 0) if the batch took no copy (it only read).</summary>
    (object? Version, long Seq) BatchCompleted(long bid);

    void BatchCommitted(long bid);

    /// <summary>Drops the versions of batches after <paramref name="keptUpTo"/>; the latest state is the newest one left.</summary>
    /// <param name="keptUpTo">Versions of batches after it are dropped.</param>
    /// <param name="keepWorking">A kept batch is still running here: its working state stays (nothing after it ran here yet).</param>
    void DropAfter(long keptUpTo, bool keepWorking = false);
}
