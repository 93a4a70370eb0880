using System.Collections.Concurrent;

namespace Snapper.Pact;

/// <summary>
/// One coordinator of the ring: it accumulates the PACTs submitted to it while the token is elsewhere, and turns
/// them into one batch when the token arrives.
/// </summary>
internal sealed class PactCoordinator(int index)
{
    private readonly ConcurrentQueue<PendingPact> _pending = new();

    public int Index { get; } = index;

    public bool HasPending => !_pending.IsEmpty;

    public PendingPact Enqueue(ActorAccessInfo accessInfo, Scheduling.ActorSchedule[] schedules)
    {
        var pact = new PendingPact(accessInfo, schedules);
        _pending.Enqueue(pact);
        return pact;
    }

    /// <summary>Submissions still waiting here after <paramref name="bound"/> (the oldest are at the head).</summary>
    public IEnumerable<PendingPact> WaitingLongerThan(TimeSpan bound)
    {
        if (!_pending.TryPeek(out var oldest) || System.Diagnostics.Stopwatch.GetElapsedTime(oldest.EnqueuedAt) <= bound)
        {
            return [];
        }

        return _pending.Where(pact => System.Diagnostics.Stopwatch.GetElapsedTime(pact.EnqueuedAt) > bound).ToArray();
    }

    /// <summary>Everything accumulated so far, in arrival order.</summary>
    public List<PendingPact> Drain()
    {
        var drained = new List<PendingPact>();
        while (_pending.TryDequeue(out var pact))
        {
            drained.Add(pact);
        }

        return drained;
    }
}

/// <summary>A submitted PACT waiting for its tid.</summary>
internal sealed class PendingPact(ActorAccessInfo accessInfo, Scheduling.ActorSchedule[] schedules)
{
    public ActorAccessInfo AccessInfo { get; } = accessInfo;

    /// <summary>
    /// The schedules of the actors it declares, in the order <see cref="ActorAccessInfo.Accesses"/> enumerated them when it
    /// was submitted. Emission checks each against the actor it stands for: a caller in the same silo shares the access
    /// info with the PACT (requests are not copied inside a silo) and may change it meanwhile.
    /// </summary>
    public Scheduling.ActorSchedule[] Schedules { get; } = schedules;

    /// <summary>When it was submitted (<see cref="System.Diagnostics.Stopwatch"/> ticks), for the ordering bound.</summary>
    public long EnqueuedAt { get; } = System.Diagnostics.Stopwatch.GetTimestamp();

    public TaskCompletionSource<PactTicket> Ticket { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);
}

/// <summary>
/// A submission drained into a batch while an actor it declares was frozen for a migration, or after one moved to another
/// worker: it was not emitted, and its submitter waits for the migration and routes it again
/// (<see cref="PactService.SubmitAsync"/>). Never leaves the silo.
/// </summary>
internal sealed class MigrationReroute() : Exception("an actor it declares is being migrated");
