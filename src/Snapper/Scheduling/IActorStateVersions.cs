namespace Snapper.Scheduling;

/// <summary>
/// The versions of one actor's state that the PACT protocol moves between, called by <see cref="ActorSchedule"/>
/// under its lock: a batch that completes here leaves a version, a committed batch makes its version the
/// committed state, and a cascading abort drops every uncommitted version.
/// </summary>
internal interface IActorStateVersions
{
    /// <summary>Keeps the version the batch left; returns its log form with its seq, or nothing if the batch took no copy (it only read).</summary>
    CompletedVersion BatchCompleted(long bid);

    /// <summary>
    /// Whether batches may run side by side on disjoint keys here (key-level concurrency control): the versions then
    /// take each PACT's changes when it finishes (<see cref="PactFinished"/>), key by key.
    /// </summary>
    bool PipelinesKeys { get; }

    /// <summary>PACT <paramref name="tid"/> finished here: its changes to the keys it held become the latest state, and part of its batch's version.</summary>
    void PactFinished(long tid, long bid);

    /// <summary>PACT <paramref name="tid"/> was dropped by a cascading abort: its own version goes, unapplied.</summary>
    void PactDropped(long tid);

    void BatchCommitted(long bid);

    /// <summary>Drops the versions of batches after <paramref name="keptUpTo"/>; the latest state is the newest one left.</summary>
    /// <param name="keptUpTo">Versions of batches after it are dropped.</param>
    /// <param name="keepWorking">A kept batch is still running here: its working state stays (nothing after it ran here yet).</param>
    void DropAfter(long keptUpTo, bool keepWorking = false);
}
