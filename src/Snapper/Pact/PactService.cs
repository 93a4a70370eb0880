using System.Collections.Concurrent;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Snapper.Coordination;
using Snapper.Diagnostics;
using Snapper.Hosting;
using Snapper.Logging;
using Snapper.Scheduling;

namespace Snapper.Pact;

/// <summary>
/// PACT ordering, batching and batch commit for the actors of one silo (thesis §3.3.2): a ring of coordinators
/// passing one token, the actors' local schedules, and the commit of batches in bid order.
/// </summary>
/// <remarks>
/// <para>
/// Coordinators, schedules and the commit sequence meet in this silo-local service instead of exchanging grain
/// messages (a BatchMsg, BatchComplete and BatchCommit per actor per batch would cost more than the PACT's own calls
/// at low contention): BatchMsg, BatchComplete and BatchCommit are method calls, and an actor waits for its
/// turn on a task this service completes; the continuation resumes on the grain's own scheduler, so the actor's
/// turn-based model holds. User calls between actors stay grain calls.
/// </para>
/// <para>Invariants:</para>
/// <list type="bullet">
/// <item>Tids and bids increase in token order, and batches are emitted (registered and delivered to every
/// schedule) under <see cref="_gate"/> in that same order, before the token moves on. So every schedule sees
/// its sub-batches in bid order and prev_bid always names an emitted batch.</item>
/// <item>Batches commit strictly in bid order: a batch commits when every participant reported it complete and
/// every earlier batch committed.</item>
/// <item>A failed PACT aborts every uncommitted batch at once, under <see cref="_gate"/>, so no batch is emitted
/// while an abort is half done; <see cref="ResolvedBid"/> then covers every emitted batch, so later batches
/// never wait for aborted ones.</item>
/// <item>The token skips coordinators with nothing to batch and parks when no coordinator has work; the next
/// submission takes it. So an idle ring costs nothing, and a busy one no empty hops.</item>
/// <item>Every wait ends: a batch running longer than ExecutionTimeout aborts (with every later one); a commit record
/// not durable within LogWriteTimeout, or whose write failed, leaves its batches in doubt and stops PACT commits (the
/// log refuses later writes anyway), and every other uncommitted batch aborts; a submission not ordered within
/// ExecutionTimeout aborts without running.</item>
/// <item>Nothing here grows with the number of transactions: a doom mark lives until its PACT's batch resolves, and
/// per-actor entries (schedules, prev_bid) grow only with the number of actors.</item>
/// </list>
/// </remarks>
internal sealed partial class PactService : IPactOrdering, IBatchStatus, IBatchCompletionSink, IDisposable
{
    private const int MinTidRange = 4_096;
    private readonly object _gate = new();
    private readonly PactCoordinator[] _ring;
    // In bid order. A sorted list, not a sorted dictionary: the oldest batch is read at every commit, which a sorted
    // dictionary can only enumerate to (an enumerator and its stack each time). Batches are added in bid order (Register),
    // so adding appends, and removing the oldest moves the few uncommitted batches behind it.
    private readonly SortedList<long, PactBatch> _uncommitted = new();

    // With a log: the uncommitted batches whose commit record is not being written yet, in bid order (the tail of
    // _uncommitted after the committing prefix). CommitInOrder looks only at these, so a BatchComplete does not walk
    // the batches that wait for their records to become durable (dozens under skew, each time, under _gate).
    private readonly Queue<PactBatch> _notCommitting = new();

    // The uncommitted batches that still wait for a participant's BatchComplete. A BatchComplete counts itself here
    // without _gate and takes the lock only when it was the last one: a batch of 40 PACTs has about 150 participants,
    // and each taking _gate made it the most contended lock of the silo.
    private readonly ConcurrentDictionary<long, PactBatch> _executing = new();
    private readonly ConcurrentDictionary<GrainId, ActorSchedule> _schedules = new();
    private readonly ConcurrentDictionary<long, TransactionAbortedException> _doomed = new();
    private readonly IGrainFactory _grains;
    private readonly SnapperMetrics _metrics;
    private readonly ILogger<PactService> _logger;
    private readonly TimeSpan _logWriteTimeout;
    private readonly int _queueCapacity;

    private readonly SemaphoreSlim _queueRoom;
    private readonly HybridScheduling _hybrid;
    private readonly Cluster.ActorPlacementMap _placement;
    private readonly int _workerIndex;
    private readonly bool _globalShortcut;
    // Bids in (From, To] were aborted; the oldest ranges are forgotten beyond a bound, and a bid at or below
    // _forgottenBelow is then reported as not committed (an ACT asking about it aborts, which is always safe).
    private readonly Queue<(long From, long To)> _abortedRanges = new();
    private long _forgottenBelow = -1;
    private long _lastCommittedBid = -1;
    // Set when a BatchCommit record could not be written: from then on no batch commits.
    private bool _commitStopped;
    // The first batch reported in doubt: no batch from it on is applied in this silo.
    private long _inDoubtFrom = long.MaxValue;
    private readonly TimeSpan _executionTimeout;
    private readonly ITimer _watchdog;
    private PactToken? _parked = new();
    // Doom marks of tids at or below this belong to resolved batches: a late one is dropped, not kept.
    private long _resolvedTid = -1;
    private long _resolvedBid = -1;
    private long _lastBid = -1;
    private readonly Coordination.TidRanges _tidRanges;
    private readonly Migration.MigrationGate _migrations;
    private readonly SnapperTestHooks _testHooks;

    public PactService(IOptions<SnapperOptions> options, IGrainFactory grains, SnapperMetrics metrics, ILogger<PactService> logger,
        WriteAheadLog log, SnapperTestHooks testHooks, Cluster.ActorPlacementMap placement, Coordination.TidRanges tidRanges,
        Migration.MigrationGate migrations)
    {
        _migrations = migrations;
        _tidRanges = tidRanges;
        _placement = placement;
        _workerIndex = options.Value.WorkerIndex;
        _globalShortcut = options.Value.GlobalCommitShortcut;
        Log = log;
        _grains = grains;
        _metrics = metrics;
        _logger = logger;
        _testHooks = testHooks;
        _hybrid = options.Value.HybridScheduling;
        _executionTimeout = options.Value.ExecutionTimeout;
        _logWriteTimeout = options.Value.LogWriteTimeout;
        _queueCapacity = options.Value.PactQueueCapacity;
        _queueRoom = new SemaphoreSlim(_queueCapacity, _queueCapacity);

        // One timer bounds every batch, instead of a timer per PACT: a batch still uncommitted after
        // ExecutionTimeout (a PACT stuck in user code, or waiting for a call that never comes) is aborted.
        var period = TimeSpan.FromTicks(Math.Max(TimeSpan.FromMilliseconds(10).Ticks, _executionTimeout.Ticks / 4));
        _watchdog = TimeProvider.System.CreateTimer(_ => AbortOverdue(), null, period, period);
        _ring = Enumerable.Range(0, options.Value.Coordinators).Select(i => new PactCoordinator(i)).ToArray();
        metrics.ObserveEntries("pact.schedules", "Actor schedules of the PACT service (one per actor ever scheduled).", () => Sizes.Schedules);
        metrics.ObserveEntries("pact.doomed", "Doom marks of failed PACTs whose batch has not resolved.", () => Sizes.Doomed);
        metrics.ObserveEntries("pact.uncommitted", "Uncommitted PACT batches.", () => Sizes.Uncommitted);
        metrics.ObserveEntries("pact.aborted_ranges", "Remembered ranges of aborted batches (bounded at 4,096).", () => Sizes.AbortedRanges);
    }

    public void Dispose() => _watchdog.Dispose();

    /// <summary>The silo's write-ahead log; BatchComplete and BatchCommit records go there before the messages they stand for.</summary>
    public WriteAheadLog Log { get; }

    /// <summary>Sizes of what this service keeps, for the soak report and tests.</summary>
    public (int Schedules, int Doomed, int Uncommitted, int AbortedRanges) Sizes
    {
        get
        {
            lock (_gate)
            {
                return (_schedules.Count, _doomed.Count, _uncommitted.Count, _abortedRanges.Count);
            }
        }
    }

    /// <summary>
    /// Freezes <paramref name="actor"/> for a migration in this silo's ordering: under the emission lock, so once this
    /// returns no local batch that declares it is emitted here until it is released (see <see cref="Migration.MigrationGate"/>).
    /// </summary>
    public void Freeze(GrainId actor, Guid migration, Guid incarnation)
    {
        lock (_gate)
        {
            _migrations.Freeze(actor, migration, incarnation);
        }
    }

    /// <summary>Every batch with a bid at or below this is committed or aborted.</summary>
    public long ResolvedBid => Volatile.Read(ref _resolvedBid);

    /// <summary>The actor's schedule in this silo, made at its first use; kept for as long as the silo runs.</summary>
    public ActorSchedule ScheduleOf(GrainId actor) =>
        _schedules.GetOrAdd(actor, static (id, service) => new ActorSchedule(id, service, service, service._hybrid, service._testHooks, service._metrics), this);

    /// <summary>The actor's schedule if anything here used one yet, without making one.</summary>
    public ActorSchedule? ExistingScheduleOf(GrainId actor) => _schedules.TryGetValue(actor, out var schedule) ? schedule : null;

    /// <summary>
    /// Submits a PACT to the coordinator its first actor hashes to; completes when the PACT has a tid and its batch was
    /// emitted. Bounded by ExecutionTimeout without a timer per PACT: the service's watchdog withdraws submissions
    /// waiting longer (<see cref="WithdrawStaleSubmissions"/>), which then fail with <see cref="AbortReason.OrderingFailed"/>.
    /// </summary>
    public Task<PactTicket> SubmitAsync(GrainId root, ActorAccessInfo accessInfo) =>
        // An embedded silo never freezes an actor (a migration moves actors between a cluster's workers, and an embedded
        // silo refuses to start one), so nothing it submits comes back to be routed again: no state machine for the loop.
        IsClustered ? SubmitRoutedAsync(root, accessInfo) : SubmitOnceAsync(root, accessInfo);

    private async Task<PactTicket> SubmitRoutedAsync(GrainId root, ActorAccessInfo accessInfo)
    {
        // A PACT that declares an actor being migrated is ordered once the actor serves from its new worker, and routed
        // by the placement it has then (held here, or emitted after the freeze and sent back: MigrationReroute).
        var deadline = Environment.TickCount64 + (long)_executionTimeout.TotalMilliseconds;
        while (true)
        {
            // Its first actor frozen: the PACT runs on that actor's activation here, which must not wait for its own
            // migration (that waits for this activation to go idle). The client submits it again (StartTxn does).
            if (_migrations.IsFrozen(root))
            {
                throw new TransactionAbortedException(0, AbortReason.ActorMigrating, $"its first actor {root} is being moved to another worker; nothing of it ran.");
            }

            if (!_migrations.IsEmpty && _migrations.AnyFrozen(accessInfo.Accesses.Keys)
                && !await _migrations.WhenReleasedAsync(accessInfo.Accesses.Keys, TimeSpan.FromMilliseconds(Math.Max(0, deadline - Environment.TickCount64))))
            {
                throw new TransactionAbortedException(0, AbortReason.ActorMigrating,
                    $"an actor it declares was still being migrated after {_executionTimeout}; nothing of it ran.");
            }

            try
            {
                return await SubmitOnceAsync(root, accessInfo);
            }
            catch (MigrationReroute)
            {
                // Frozen after it was queued: it waits above, then goes where the actor lives by then.
            }
        }
    }

    // Not async while the ordering queue has room (the usual case): the caller awaits the ticket itself.
    private Task<PactTicket> SubmitOnceAsync(GrainId root, ActorAccessInfo accessInfo)
    {
        if (!IsLocal(accessInfo))
        {
            return SubmitGlobalAsync(root, accessInfo);
        }

        // Backpressure: a submission takes a place in the silo's ordering queue first, and gives it back when its PACT
        // was drained into a batch (or withdrawn), so that a ring slower than the load slows the submitters down.
        var room = _queueRoom.WaitAsync(_executionTimeout);
        return room.IsCompletedSuccessfully && room.Result ? Enqueue(root, accessInfo) : EnqueueWhenRoomAsync(room, root, accessInfo);
    }

    private async Task<PactTicket> EnqueueWhenRoomAsync(Task<bool> room, GrainId root, ActorAccessInfo accessInfo)
    {
        if (!await room)
        {
            throw new TransactionAbortedException(0, AbortReason.OrderingFailed,
                $"the PACT ordering queue stayed full ({_queueCapacity}) for {_executionTimeout}; nothing of it ran.");
        }

        return await Enqueue(root, accessInfo);
    }

    /// <summary>Queues a PACT that holds a place in the ordering queue at its coordinator; completes when it is ordered.</summary>
    private Task<PactTicket> Enqueue(GrainId root, ActorAccessInfo accessInfo)
    {
        var coordinator = _ring[root.GetUniformHashCode() % (uint)_ring.Length];
        var schedules = new ActorSchedule[accessInfo.Accesses.Count];
        var declared = 0;
        foreach (var actor in accessInfo.Accesses.Keys)
        {
            schedules[declared++] = ScheduleOf(actor);
        }

        var pending = coordinator.Enqueue(accessInfo, schedules);

        // Parking and taking the token are both full fences (Interlocked), so of a submitter that enqueues and then
        // takes the token, and a ring that parks it and then looks for work, at least one sees the other's write.
        if (Interlocked.Exchange(ref _parked, null) is { } token)
        {
            Pass(token, coordinator.Index);
        }

        return pending.Ticket.Task;
    }

    /// <summary>
    /// Withdraws submissions that waited longer than ExecutionTimeout to be ordered (a stuck ring): they fail with
    /// <see cref="AbortReason.OrderingFailed"/>. Emission skips withdrawn ones, or aborts the batch of one withdrawn
    /// while it was being emitted, so nothing of a withdrawn PACT runs or commits.
    /// </summary>
    private void WithdrawStaleSubmissions()
    {
        foreach (var coordinator in _ring)
        {
            foreach (var pending in coordinator.WaitingLongerThan(_executionTimeout))
            {
                pending.Ticket.TrySetException(new TransactionAbortedException(0, AbortReason.OrderingFailed,
                    $"it was not ordered within {_executionTimeout}; nothing of it ran."));
            }
        }
    }

    /// <summary>The outcome of a PACT's batch: null if it committed, else why it aborted or that it is in doubt.</summary>
    public Task<SnapperException?> OutcomeAsync(PactTicket ticket)
    {
        if (ticket.Outcome is { } known)
        {
            return known; // completed by whatever resolves the batch: commit, abort or in doubt
        }

        lock (_gate)
        {
            if (_uncommitted.TryGetValue(ticket.Bid, out var batch))
            {
                return batch.Outcome.Task;
            }
        }

        // Resolved before anyone asked: only an abort removes a batch whose PACT has not yet returned.
        return Task.FromResult<SnapperException?>(
            new TransactionAbortedException(ticket.Tid, AbortReason.CascadingAbort, $"its batch {ticket.Bid} was aborted."));
    }

    /// <summary>
    /// Completes with true when batch <paramref name="bid"/> has committed, with false if it aborted. An ACT that
    /// read what the batch wrote commits only after it (thesis §3.3.4.4).
    /// </summary>
    public Task<bool> WhenResolvedAsync(long bid)
    {
        lock (_gate)
        {
            return _uncommitted.TryGetValue(bid, out var batch)
                ? Committed(batch.Outcome.Task)
                : Task.FromResult(IsCommittedLocked(bid));
        }

        static async Task<bool> Committed(Task<SnapperException?> outcome) => await outcome is null;
    }

    private bool IsCommittedLocked(long bid)
    {
        if (bid < 0)
        {
            return true; // no batch
        }

        if (bid > _lastCommittedBid || bid <= _forgottenBelow)
        {
            return false;
        }

        foreach (var (from, to) in _abortedRanges)
        {
            if (bid > from && bid <= to)
            {
                return false;
            }
        }

        return true;
    }

    /// <summary>
    /// Marks a PACT as failed where its first actor will see it, even if user code caught the failed call. A mark for
    /// a PACT whose batch already resolved (a late call failing after the outcome) has nobody to read it and is dropped;
    /// the others are removed when their batch resolves (<see cref="ForgetDooms"/>), so the map holds only running PACTs.
    /// </summary>
    public void Doom(TransactionAbortedException reason)
    {
        var globalPart = -1L;
        if (IsClustered)
        {
            lock (_gate)
            {
                if (!_globalTidBids.TryGetValue(reason.Tid, out globalPart))
                {
                    globalPart = -1;
                }
            }
        }

        if (globalPart >= 0)
        {
            // A global PACT's first actor may be on another worker and never read this mark: its batch aborts here and
            // now (which tells the master, which aborts it everywhere).
            Abort(new PactTicket(reason.Tid, globalPart), reason);
        }

        if (reason.Tid > Volatile.Read(ref _resolvedTid) || globalPart >= 0)
        {
            _doomed.TryAdd(reason.Tid, reason);
        }
    }

    /// <summary>Drops the doom marks of the PACTs of resolved batches (under <see cref="_gate"/>).</summary>
    private void ForgetDooms(PactBatch batch)
    {
        ForgetGlobal(batch);
        if (batch.GlobalTids is { } globalTids)
        {
            // Global tids come from the master's ranges, not this silo's: they say nothing of local tids resolved.
            foreach (var tid in globalTids)
            {
                _doomed.TryRemove(tid, out _);
            }

            return;
        }

        Volatile.Write(ref _resolvedTid, Math.Max(_resolvedTid, batch.LastTid));
        if (_doomed.IsEmpty)
        {
            return;
        }

        for (var tid = batch.Bid; tid <= batch.LastTid; tid++)
        {
            _doomed.TryRemove(tid, out _);
        }
    }

    public TransactionAbortedException? TakeDoom(long tid) => _doomed.TryRemove(tid, out var reason) ? reason : null;

    /// <summary>
    /// The PACT's first method returned: releases the accesses it declared but did not make. Returns the failure that
    /// dooms the PACT, or null (see <see cref="IPactOrdering.FinishAsync"/>).
    /// </summary>
    /// <remarks>
    /// By what the PACT was ordered with, never by the declaration as it reads now: a caller in this silo shares its
    /// ActorAccessInfo with the PACT (requests are not copied inside a silo) and may have changed it since.
    /// </remarks>
    public ValueTask<TransactionAbortedException?> FinishAsync(PactTicket ticket)
    {
        if (ticket.Global is { } global)
        {
            return new ValueTask<TransactionAbortedException?>(FinishGlobalAsync(ticket.Tid, global.Gbid, global.Declaration));
        }

        var clean = true;
        foreach (var schedule in ticket.Schedules!)
        {
            clean &= schedule.Finish(ticket.Tid);
        }

        return clean ? default : new ValueTask<TransactionAbortedException?>(StillRunning(ticket.Tid));
    }

    private static TransactionAbortedException StillRunning(long tid) =>
        new(tid, AbortReason.UnawaitedCall, "its first method returned while a call it made was still running; await every CallActor.");

    Task IPactOrdering.WhenGlobalMergedAsync(TxnContext context) =>
        (context.GlobalWorkers & (1L << _workerIndex)) == 0
            ? Task.FromException(new TransactionAbortedException(context.Tid, AbortReason.UndeclaredAccess,
                $"it called an actor on worker {_workerIndex}, and its ActorAccessInfo declares no actor there."))
            : WhenGlobalMergedAsync(context.GlobalBid, context.Tid);

    /// <summary>
    /// Aborts the batch of a failed PACT and, since later batches may have read its writes, every uncommitted
    /// batch (thesis §3.3.2.4). Emission waits on the same lock, so it resumes only after the abort is complete.
    /// </summary>
    public void Abort(PactTicket failed, TransactionAbortedException reason)
    {
        lock (_gate)
        {
            if (!_uncommitted.TryGetValue(failed.Bid, out var failedBatch) || failedBatch.Committing)
            {
                return; // resolved already, or its commit record is being written (it commits)
            }

            if (failedBatch.Voted)
            {
                // A global part voted for here: the master decides. A PACT fails after its part here completed only at its
                // finish, when another worker did not confirm it or still runs a method of it; that worker's part then
                // cannot complete, so the master is asked to abort now rather than when its watchdog finds the batch
                // overdue. It does unless every worker voted (then the finish did arrive and the batch commits), and its
                // abort comes back here with this reason.
                ReportGlobalAborts([failedBatch], reason);
                return;
            }

            AbortUncommittedLocked(failed, reason);
        }
    }

    /// <summary>
    /// Aborts every uncommitted batch whose commit record is not being written and that is not a global part the master
    /// decides (under <see cref="_gate"/>). Those kept are a prefix: a batch commits, or is voted for, only after every
    /// earlier one is committing or voted.
    /// </summary>
    private void AbortUncommittedLocked(PactTicket failed, TransactionAbortedException reason)
    {
        var first = _uncommitted.Values.FirstOrDefault(b => !b.Committing && !b.Voted);
        if (first is not null)
        {
            AbortFromLocked(first.Bid, failed, reason, dropVoted: false);
        }
    }

    /// <summary>
    /// Aborts every uncommitted batch from <paramref name="fromBid"/> on (under <see cref="_gate"/>): later batches may have
    /// read what the first one wrote. Batches whose commit record is being written are kept, and voted global parts unless
    /// the master aborted them (<paramref name="dropVoted"/>); batches before <paramref name="fromBid"/> are untouched.
    /// Global parts aborted here are reported to the master, which aborts them on every worker.
    /// </summary>
    private void AbortFromLocked(long fromBid, PactTicket failed, TransactionAbortedException reason, bool dropVoted)
    {
        var batches = _uncommitted.Values.Where(b => b.Bid >= fromBid && !b.Committing && (dropVoted || !b.Voted)).ToArray();
        if (batches.Length == 0)
        {
            return;
        }

        var keptUpTo = batches[0].Bid - 1;
        if (batches.FirstOrDefault(b => b.GloballyCommitted) is { } committedPart)
        {
            // Never expected: the master commits global batches in order and aborts only undecided ones, so an abort that
            // reaches a part it committed means the two disagree (lost or reordered messages). Said loudly, since the
            // part's writes are lost here while other workers keep theirs.
            _logger.LogCritical("Dropping global part {Gbid} (local batch {Bid}), which the master committed, in an abort from batch {From}",
                committedPart.Gbid, committedPart.Bid, fromBid);
        }

        foreach (var batch in batches)
        {
            _uncommitted.Remove(batch.Bid);
            _executing.TryRemove(batch.Bid, out _);
        }

        // The queue of batches whose record is not being written holds exactly the uncommitted, non-committing ones.
        var notCommitting = _notCommitting.Where(b => _uncommitted.ContainsKey(b.Bid)).ToArray();
        _notCommitting.Clear();
        foreach (var batch in notCommitting)
        {
            _notCommitting.Enqueue(batch);
        }

        _abortedRanges.Enqueue((keptUpTo, _lastBid));
        if (_abortedRanges.Count > 4_096)
        {
            _forgottenBelow = _abortedRanges.Dequeue().To;
        }

        AdvanceResolvedBid();
        TransactionAbortedException ReasonFor(long bid, long tid) => tid == reason.Tid
            ? reason
            : new TransactionAbortedException(tid, AbortReason.CascadingAbort, $"transaction {reason.Tid} of batch {failed.Bid} failed ({reason.Reason}); batch {bid} was not committed yet.", reason);
        foreach (var actor in batches.SelectMany(b => b.Participants).Distinct())
        {
            ScheduleOf(actor).AbortAfter(keptUpTo, ReasonFor);
        }

        foreach (var batch in batches)
        {
            ForgetDooms(batch);
            batch.Resolve(batch.Bid == failed.Bid ? reason : new TransactionAbortedException(
                reason.Tid, reason.Reason == AbortReason.LogWriteFailed ? AbortReason.LogWriteFailed : AbortReason.CascadingAbort,
                $"batch {failed.Bid} failed ({reason.Reason}).", reason));
        }

        // Parts of global batches the master already aborted need no report; any other global part dropped here (one
        // the master emitted after the range it aborted, merged here before that abort arrived) must be reported, or the
        // master would wait for its vote until its watchdog gives up.
        ReportGlobalAborts(batches.Where(b => b.IsGlobal && !IsGlobalAborted(b.Gbid)), reason);

        _logger.LogDebug("PACT {Tid} failed ({Reason}); aborted {Count} uncommitted batch(es)", reason.Tid, reason.Reason, batches.Length);
    }

    /// <summary>
    /// Moves <see cref="ResolvedBid"/> up to just below the oldest unresolved batch (every emitted batch when none is),
    /// under <see cref="_gate"/>. Schedules start a batch whose prev_bid is at or below it, so it must never pass a batch
    /// that may still run.
    /// </summary>
    private void AdvanceResolvedBid()
    {
        var resolved = _uncommitted.Count == 0 ? _lastBid : _uncommitted.GetKeyAtIndex(0) - 1;
        Volatile.Write(ref _resolvedBid, Math.Max(_resolvedBid, resolved));
    }
}
