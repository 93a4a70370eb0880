using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Snapper.Coordination;
using Snapper.Diagnostics;
using Snapper.Hosting;
using Snapper.Logging;

namespace Snapper.Cluster;

/// <summary>
/// The master's global ordering and commit of PACTs whose actors span workers (thesis §4.2.3): global batches with gtids
/// and gbids, one sub-batch per worker sent in gbid order, and commit in gbid order once every worker voted.
/// </summary>
/// <remarks>
/// <para>Invariants:</para>
/// <list type="bullet">
/// <item>Gtids and gbids increase in emission order, and each worker receives its sub-batches in that order, one delivery
/// at a time (a per-worker pump awaits each before sending the next), carrying the previous gbid sent to it. A worker
/// merges them into its local order as they come, so on every worker local order respects global order (§4.2.3.1).</item>
/// <item>A global batch commits once every worker it touches voted and every earlier global batch committed; its commit
/// record is on the master's log (when it has one) before any worker hears. A worker votes only when its part is durable
/// and everything before it locally is committed, or (the shortcut, §4.2.3.4) is a global batch it already voted for, so a
/// committed global batch never depends on anything that may still abort.</item>
/// <item>A failed part aborts its global batch and every later uncommitted one (§4.2.3.5): later global batches may have
/// read its writes on some worker. Every worker hears the aborted range and drops its parts and the local batches after
/// them. A batch whose commit is being written is never aborted.</item>
/// <item>Every wait ends: a submission not ordered within ExecutionTimeout fails, and a global batch not committed within
/// ExecutionTimeout aborts (with every later one), so a worker that is down or silent stops only the batches that need it.</item>
/// <item>A commit stays open (in memory, and with a log as a <see cref="LogRecordType.CommittedAwaitingAcks"/> record)
/// until every worker of the batch confirmed it, which a worker does only once its own commit record for its part is
/// durable. So a worker that asks <see cref="OutcomeOfAsync"/> (after a restart, or when a commit message was lost)
/// hears "committed" for every batch that committed; a batch that is neither open nor in flight was aborted, or every
/// worker already holds its commit (presumed abort, as for ACTs).</item>
/// </list>
/// </remarks>
internal sealed class GlobalPactService : IDisposable
{
    private const int MinTidRange = 4_096;
    private readonly object _gate = new();
    private readonly IGrainFactory _grains;
    private readonly WriteAheadLog _log;
    private readonly SnapperMetrics _metrics;
    private readonly ILogger<GlobalPactService> _logger;
    private readonly ActorPlacementMap _placement;
    private readonly TimeSpan _executionTimeout;
    private readonly TimeSpan _interval;
    private readonly SortedDictionary<long, GlobalBatch> _uncommitted = new();
    private readonly Dictionary<int, long> _prevGbid = new();
    private readonly Dictionary<int, WorkerPump> _pumps = new();
    // gbid -> the workers that have not confirmed its commit yet (the in-memory side of the open commits).
    private readonly Dictionary<long, HashSet<int>> _awaitingAcks = new();
    private readonly Guid _epoch = Guid.NewGuid();
    private readonly ITimer _watchdog;
    private List<PendingGlobal> _pending = [];

    // Global PACTs that declare an actor frozen for a migration: not emitted until it is released (see Release).
    private readonly List<PendingGlobal> _held = [];
    private readonly Migration.MigrationGate _migrations;
    private bool _emitting;

    // Completes when every worker applied the last abort (or failed to answer within ExecutionTimeout). No global batch
    // is emitted before: a worker must drop the aborted parts before it receives a later one, or it would run that one
    // on their writes and vote for it by the shortcut, and the master, not knowing, could commit it.
    private Task _abortsApplied = Task.CompletedTask;
    private long _nextTid;
    private long _rangeEnd;
    private long _lastGbid = -1;

    private readonly SnapperTestHooks _testHooks;
    private readonly TidRanges _tidRanges;

    public GlobalPactService(IOptions<SnapperOptions> options, IGrainFactory grains, WriteAheadLog log, SnapperMetrics metrics,
        ILogger<GlobalPactService> logger, ActorPlacementMap placement, SnapperTestHooks testHooks, TidRanges tidRanges,
        Migration.MigrationGate migrations)
    {
        _migrations = migrations;
        _tidRanges = tidRanges;
        _testHooks = testHooks;
        _grains = grains;
        _log = log;
        _metrics = metrics;
        _logger = logger;
        _placement = placement;
        _executionTimeout = options.Value.ExecutionTimeout;
        _interval = options.Value.GlobalBatchInterval;
        var period = TimeSpan.FromTicks(Math.Max(TimeSpan.FromMilliseconds(10).Ticks, _executionTimeout.Ticks / 4));
        _watchdog = TimeProvider.System.CreateTimer(_ => AbortOverdue(), null, period, period);
        metrics.ObserveEntries("global.uncommitted", "Uncommitted global PACT batches (master).", () => Uncommitted);
    }

    public void Dispose() => _watchdog.Dispose();

    public int Uncommitted
    {
        get
        {
            lock (_gate)
            {
                return _uncommitted.Count;
            }
        }
    }

    /// <summary>Orders a global PACT; completes when its global batch was handed to the workers' delivery pumps.</summary>
    public async Task<GlobalTicket> SubmitAsync(ActorAccessInfo accessInfo, GrainId root)
    {
        var pending = new PendingGlobal(accessInfo, root);
        lock (_gate)
        {
            _pending.Add(pending);
            if (!_emitting)
            {
                _emitting = true;
                _ = Task.Run(EmitLoopAsync);
            }
        }

        try
        {
            return await pending.Ticket.Task.WaitAsync(_executionTimeout);
        }
        catch (TimeoutException)
        {
            pending.Ticket.TrySetException(new TimeoutException());
            throw new TransactionAbortedException(0, AbortReason.OrderingFailed, $"the master did not order it within {_executionTimeout}; nothing of it ran.");
        }
    }

    /// <summary>
    /// Emits what accumulated while the previous global batch was emitted (tuned batching: after waiting
    /// GlobalBatchInterval first), until nothing is pending. One loop at a time, so gbids follow emission order.
    /// </summary>
    private async Task EmitLoopAsync()
    {
        while (true)
        {
            if (_interval > TimeSpan.Zero)
            {
                await Task.Delay(_interval);
            }

            List<PendingGlobal> pacts;
            lock (_gate)
            {
                pacts = _pending;
                _pending = [];
                if (pacts.Count == 0)
                {
                    _emitting = false;
                    return;
                }
            }

            pacts.RemoveAll(p => p.Ticket.Task.IsCompleted); // timed out waiting
            if (pacts.Count == 0)
            {
                continue;
            }

            await WhenAbortsAppliedAsync();

            try
            {
                if (_nextTid + pacts.Count > _rangeEnd)
                {
                    var size = Math.Max(MinTidRange, pacts.Count);
                    _nextTid = await _tidRanges.ReserveAsync(size);
                    _rangeEnd = _nextTid + size;
                }

                while (!Emit(pacts))
                {
                    await WhenAbortsAppliedAsync(); // an abort came in between: its range must reach every worker first
                }
            }
            catch (Exception exception)
            {
                _logger.LogError(exception, "The master could not order {Count} global PACT(s)", pacts.Count);
                foreach (var pact in pacts)
                {
                    pact.Ticket.TrySetException(new TransactionAbortedException(0, AbortReason.OrderingFailed, $"the master could not order it: {exception.Message}; nothing of it ran."));
                }
            }
        }
    }

    private async Task WhenAbortsAppliedAsync()
    {
        Task applied;
        lock (_gate)
        {
            applied = _abortsApplied;
        }

        await applied.WaitAsync(_executionTimeout).ContinueWith(static _ => { }, TaskScheduler.Default);
    }

    /// <summary>Emits one global batch; false (nothing sent) if an abort has not reached every worker yet.</summary>
    private bool Emit(List<PendingGlobal> pacts)
    {
        var gbid = _nextTid;
        var tickets = new GlobalTicket[pacts.Count];
        lock (_gate)
        {
            if (!_abortsApplied.IsCompleted)
            {
                return false;
            }

            // Checked under the lock a freeze takes (Freeze): a PACT declaring a frozen actor waits in _held, and is
            // emitted after the migration, to the worker the actor lives on then (the sub-batches are made below).
            if (!_migrations.IsEmpty)
            {
                foreach (var frozen in pacts.Where(pact => _migrations.AnyFrozen(pact.AccessInfo.Accesses.Keys)).ToArray())
                {
                    pacts.Remove(frozen);
                    if (_migrations.IsFrozen(frozen.Root))
                    {
                        // Its first actor is the one moving: that actor's activation waits for this answer, and the
                        // migration waits for the activation to go idle. Refused at once; the client submits it again.
                        frozen.Ticket.TrySetException(new TransactionAbortedException(0, AbortReason.ActorMigrating,
                            $"its first actor {frozen.Root} is being moved to another worker; nothing of it ran."));
                    }
                    else
                    {
                        _held.Add(frozen);
                    }
                }

                if (pacts.Count == 0)
                {
                    return true;
                }

                tickets = new GlobalTicket[pacts.Count];
            }

            var perWorker = new Dictionary<int, List<GlobalAccess>>();
            for (var i = 0; i < pacts.Count; i++)
            {
                var gtid = _nextTid++;
                tickets[i] = new GlobalTicket(gtid, gbid);
                foreach (var (actor, accesses) in pacts[i].AccessInfo.Accesses)
                {
                    var worker = _placement.WorkerOf(actor);
                    if (!perWorker.TryGetValue(worker, out var list))
                    {
                        perWorker[worker] = list = [];
                    }

                    list.Add(new GlobalAccess(gtid, actor, accesses) { Keys = pacts[i].AccessInfo.KeysOf(actor)?.ToArray() });
                }
            }

            _lastGbid = gbid;
            _uncommitted.Add(gbid, new GlobalBatch(gbid, [.. perWorker.Keys]));
            foreach (var (worker, accesses) in perWorker)
            {
                var prev = _prevGbid.GetValueOrDefault(worker, -1);
                _prevGbid[worker] = gbid;
                PumpFor(worker).Send(new GlobalSubBatch(gbid, prev, [.. accesses]) { MasterEpoch = _epoch });
            }
        }

        _metrics.BatchEmitted(pacts.Count);
        for (var i = 0; i < pacts.Count; i++)
        {
            pacts[i].Ticket.TrySetResult(tickets[i]);
        }

        return true;
    }

    private WorkerPump PumpFor(int worker)
    {
        if (!_pumps.TryGetValue(worker, out var pump))
        {
            _pumps[worker] = pump = new WorkerPump(this, worker);
        }

        return pump;
    }

    /// <summary>
    /// Freezes <paramref name="actor"/> for a migration: from now on no global batch declaring it is emitted (they wait in
    /// the held list). Returns the last gbid already sent to <paramref name="worker"/> (the actor's worker): every global
    /// part that may involve the actor is at or below it, and the worker merges up to it before the actor hands over.
    /// </summary>
    public long Freeze(GrainId actor, Guid migration, int worker)
    {
        lock (_gate)
        {
            _migrations.Freeze(actor, migration, Guid.Empty);

            // Held PACTs whose first actor is this one are refused now (see Emit): its activation waits for them.
            foreach (var rooted in _held.Where(pact => pact.Root == actor).ToArray())
            {
                _held.Remove(rooted);
                rooted.Ticket.TrySetException(new TransactionAbortedException(0, AbortReason.ActorMigrating,
                    $"its first actor {actor} is being moved to another worker; nothing of it ran."));
            }

            return _prevGbid.GetValueOrDefault(worker, -1);
        }
    }

    /// <summary>Releases <paramref name="actor"/>: held global PACTs no longer declaring a frozen actor are ordered again.</summary>
    public void Release(GrainId actor, Guid migration)
    {
        lock (_gate)
        {
            _migrations.Release(actor, migration);
            var ready = _held.Where(pact => !_migrations.AnyFrozen(pact.AccessInfo.Accesses.Keys)).ToArray();
            if (ready.Length == 0)
            {
                return;
            }

            foreach (var pact in ready)
            {
                _held.Remove(pact);
                _pending.Add(pact);
            }

            if (!_emitting)
            {
                _emitting = true;
                _ = Task.Run(EmitLoopAsync);
            }
        }
    }

    /// <summary>Worker <paramref name="worker"/> voted for its part of <paramref name="gbid"/>.</summary>
    public void Vote(long gbid, int worker)
    {
        List<GlobalBatch>? ready = null;
        lock (_gate)
        {
            if (!_uncommitted.TryGetValue(gbid, out var batch))
            {
                // Aborted meanwhile (the worker voted before the abort reached it): the abort, or the copy of it the next
                // sub-batch carries, drops the part there, and a worker still waiting asks and hears "aborted". Nothing to do
                // here, but said, so that a trace of a stuck part shows the vote arrived.
                _logger.LogDebug("Vote of worker {Worker} for global batch {Gbid}, which is not undecided here (aborted, or a repeated vote for a committed one)", worker, gbid);
                return;
            }

            batch.Voted.Add(worker);
            foreach (var head in _uncommitted.Values)
            {
                if (head.Committing)
                {
                    continue;
                }

                if (head.Voted.Count < head.Workers.Length)
                {
                    break;
                }

                head.Committing = true;
                (ready ??= []).Add(head);
            }
        }

        if (ready is not null)
        {
            _ = CommitAsync(ready);
        }
    }

    /// <summary>Logs the commit of <paramref name="batches"/> (in gbid order), open until their workers confirm, and tells the workers.</summary>
    private async Task CommitAsync(List<GlobalBatch> batches)
    {
        if (_log.Enabled)
        {
            try
            {
                await Task.WhenAll(batches.Select(b => _log.AppendCommitAsync(LoggedTxnKind.GlobalBatch, b.Gbid, awaitingAcks: true,
                    [LogRecord.CommittedAwaitingAcks(LoggedTxnKind.GlobalBatch, b.Gbid)])));
            }
            catch (Exception exception)
            {
                // Not known to be durable: no worker hears "commit"; their parts stay voted, and in doubt, until the
                // master restarts (its log then decides). Later global batches cannot commit either.
                _logger.LogCritical(exception, "GlobalBatchCommit records for {First}..{Last} were not confirmed durable; global commits are stopped", batches[0].Gbid, batches[^1].Gbid);
                foreach (var batch in batches)
                {
                    batch.Written.TrySetException(exception);
                }

                return;
            }
        }

        lock (_gate)
        {
            foreach (var batch in batches)
            {
                _uncommitted.Remove(batch.Gbid);
                _awaitingAcks[batch.Gbid] = [.. batch.Workers];
            }
        }

        foreach (var batch in batches)
        {
            batch.Written.TrySetResult();
            _metrics.BatchCommitted(System.Diagnostics.Stopwatch.GetElapsedTime(batch.EmittedAt));
            foreach (var worker in batch.Workers)
            {
                _ = TellCommitAsync(batch.Gbid, worker);
            }
        }
    }

    private async Task TellCommitAsync(long gbid, int worker)
    {
        if (_testHooks.WithholdGlobalCommit?.Invoke(worker, gbid) == true)
        {
            return;
        }

        try
        {
            await _grains.GetGrain<IWorkerPactGrain>(worker).Commit(gbid);
        }
        catch (Exception exception)
        {
            // The worker voted, so its part waits for this decision; it asks (OutcomeOfAsync) when it waited too long or
            // restarted, and the commit stays open until then.
            _logger.LogWarning(exception, "Worker {Worker} did not confirm the commit of global batch {Gbid}", worker, gbid);
            return;
        }

        Confirmed(gbid, worker);
    }

    /// <summary>Worker <paramref name="worker"/>'s commit record for its part of <paramref name="gbid"/> is durable.</summary>
    public void Confirmed(long gbid, int worker)
    {
        lock (_gate)
        {
            if (!_awaitingAcks.TryGetValue(gbid, out var waiting) || !waiting.Remove(worker) || waiting.Count > 0)
            {
                return;
            }

            _awaitingAcks.Remove(gbid);
        }

        if (_log.Enabled)
        {
            _log.Acknowledged(LoggedTxnKind.GlobalBatch, gbid);
        }
    }

    /// <summary>
    /// The outcome of global batch <paramref name="gbid"/>, for a worker that voted and heard nothing, or that restarted
    /// with its part's states logged and no commit record: true if committed (the worker commits its part durably, then
    /// sends <see cref="Confirmed"/>); false if aborted. A batch still in flight here is aborted now, unless its commit is
    /// being written, which this waits for. One neither open nor in flight is aborted (presumed abort).
    /// </summary>
    /// <exception cref="TimeoutException">Its commit record is still being written after ExecutionTimeout; ask again.</exception>
    public async Task<bool> OutcomeOfAsync(long gbid, int worker)
    {
        if (_log.IsUnacknowledgedCommit(LoggedTxnKind.GlobalBatch, gbid))
        {
            return true;
        }

        Task written;
        lock (_gate)
        {
            if (_awaitingAcks.ContainsKey(gbid))
            {
                return true;
            }

            if (_uncommitted.TryGetValue(gbid, out var batch) && batch.Committing)
            {
                written = batch.Written.Task;
            }
            else
            {
                // Undecided (or unknown, hence aborted or fully confirmed): decided as aborted here and now, in one step
                // with the check, so a vote cannot make it commit in between.
                AbortLocked(gbid, new TransactionAbortedException(gbid, AbortReason.CascadingAbort,
                    $"worker {worker} lost its part of global batch {gbid} before it was decided (it restarted, or stopped hearing the master)."));
                return false;
            }
        }

        await written.WaitAsync(_executionTimeout);
        return true;
    }

    /// <summary>
    /// Worker <paramref name="worker"/>'s silo died (<see cref="WorkerLossWatcher"/>). Its part of an undecided batch it
    /// had not voted for is gone (a part is durable only once voted), and so are the methods of the PACTs rooted there,
    /// whose parts on other workers wait for calls that will never come: such a batch can only abort. The first one aborts
    /// now, with every later one, instead of when the watchdog finds it overdue. A batch the worker voted for is kept: its
    /// part there completed, so nothing elsewhere waits on it, and the restarted worker learns the decision.
    /// </summary>
    public void WorkerLost(int worker)
    {
        lock (_gate)
        {
            if (_uncommitted.Values.FirstOrDefault(b => !b.Committing && b.Workers.Contains(worker) && !b.Voted.Contains(worker)) is { } first)
            {
                _logger.LogWarning("Worker {Worker} stopped before it voted for global batch {Gbid}; aborting it and every later one", worker, first.Gbid);
                AbortLocked(first.Gbid, new TransactionAbortedException(first.Gbid, AbortReason.PrepareFailed,
                    $"worker {worker} stopped before it completed its part of global batch {first.Gbid}."));
            }
        }
    }

    /// <summary>Aborts global batch <paramref name="gbid"/> and every later uncommitted one, and tells every worker.</summary>
    public void Abort(long gbid, TransactionAbortedException reason)
    {
        lock (_gate)
        {
            AbortLocked(gbid, reason);
        }
    }

    /// <summary>
    /// <see cref="Abort"/> under <see cref="_gate"/>: nothing if the batch is resolved already or committing (a worker
    /// voted for it, so no part of it failed). The workers hear it after the lock is released.
    /// </summary>
    private void AbortLocked(long gbid, TransactionAbortedException reason)
    {
        if (!_uncommitted.TryGetValue(gbid, out var failed) || failed.Committing)
        {
            return;
        }

        var aborted = _uncommitted.Values.Where(b => b.Gbid >= gbid && !b.Committing).ToArray();
        foreach (var batch in aborted)
        {
            _uncommitted.Remove(batch.Gbid);
        }

        var to = _lastGbid;
        for (var worker = 0; worker < _placement.Workers; worker++)
        {
            PumpFor(worker).Aborted(new GlobalAbort(gbid, to, reason));
        }

        _logger.LogDebug("Global batch {Gbid} failed ({Reason}); aborting global batches {From}..{To}", gbid, reason.Reason, gbid, to);
        var told = Enumerable.Range(0, _placement.Workers).Select(worker => Task.Run(() => TellAbortAsync(worker, gbid, to, reason)));
        _abortsApplied = Task.WhenAll([_abortsApplied, .. told]);
    }

    private async Task TellAbortAsync(int worker, long from, long to, TransactionAbortedException reason)
    {
        try
        {
            if (_testHooks.DelayGlobalAbort?.Invoke(worker, from) is { } delayed)
            {
                await delayed;
            }

            await _grains.GetGrain<IWorkerPactGrain>(worker).AbortFrom(from, to, reason);
        }
        catch (Exception exception)
        {
            // Down (a restart loses its parts) or cut off. Emission resumes once this call failed; the worker then learns
            // the abort from the next sub-batch it receives (it carries every abort not yet delivered to it), before it
            // merges that sub-batch, or by asking about its silent vote.
            _logger.LogDebug(exception, "Worker {Worker} did not hear the abort of global batches {From}..{To}", worker, from, to);
        }
    }

    private void AbortOverdue()
    {
        GlobalBatch? overdue;
        lock (_gate)
        {
            overdue = _uncommitted.Values.FirstOrDefault(b => !b.Committing);
        }

        if (overdue is not null && System.Diagnostics.Stopwatch.GetElapsedTime(overdue.EmittedAt) > _executionTimeout)
        {
            var missing = string.Join(", ", overdue.Workers.Where(w => !overdue.Voted.Contains(w)));
            _logger.LogWarning("Global batch {Gbid} did not commit within {Timeout} (no vote from worker(s) {Missing}); aborting it and every later one", overdue.Gbid, _executionTimeout, missing);
            Abort(overdue.Gbid, new TransactionAbortedException(overdue.Gbid, AbortReason.ExecutionTimeout,
                $"its global batch {overdue.Gbid} did not commit within {_executionTimeout} (worker(s) {missing} did not complete their part)."));
        }
    }

    /// <summary>
    /// Sends one worker its sub-batches in gbid order, one delivery at a time, each carrying the aborts the worker may
    /// not have applied yet (<see cref="GlobalSubBatch.AbortedBefore"/>). State under the service's lock.
    /// </summary>
    private sealed class WorkerPump(GlobalPactService service, int worker)
    {
        private readonly Queue<GlobalSubBatch> _queue = new();
        // Aborts decided and not yet carried by a sub-batch this worker received.
        private readonly List<GlobalAbort> _aborts = [];
        private bool _running;

        /// <summary>An abort decided (under the service's lock): the next sub-batch delivered carries it.</summary>
        public void Aborted(GlobalAbort abort) => _aborts.Add(abort);

        /// <summary>Queues a sub-batch (under the service's lock, in gbid order).</summary>
        public void Send(GlobalSubBatch subBatch)
        {
            _queue.Enqueue(subBatch);
            if (!_running)
            {
                _running = true;
                _ = Task.Run(RunAsync);
            }
        }

        private async Task RunAsync()
        {
            while (true)
            {
                GlobalSubBatch next;
                GlobalAbort[] carried;
                lock (service._gate)
                {
                    if (!_queue.TryDequeue(out next!))
                    {
                        _running = false;
                        return;
                    }

                    carried = [.. _aborts];
                    next = next with { AbortedBefore = carried };
                }

                try
                {
                    if (service._testHooks.DelayGlobalDelivery?.Invoke(worker, next.Gbid) is { } delayed)
                    {
                        await delayed;
                    }

                    await service._grains.GetGrain<IWorkerPactGrain>(worker).Deliver(next);
                    lock (service._gate)
                    {
                        _aborts.RemoveAll(carried.Contains);
                    }
                }
                catch (Exception exception)
                {
                    // The worker is down or unreachable: the batch cannot run there, so it aborts, with every later one.
                    service._logger.LogWarning(exception, "Global batch {Gbid} could not be delivered to worker {Worker}", next.Gbid, worker);
                    service.Abort(next.Gbid, new TransactionAbortedException(next.Gbid, AbortReason.OrderingFailed,
                        $"its global batch could not reach worker {worker}: {exception.Message}"));
                }
            }
        }
    }

    private sealed class PendingGlobal(ActorAccessInfo accessInfo, GrainId root)
    {
        public ActorAccessInfo AccessInfo { get; } = accessInfo;

        /// <summary>The PACT's first actor, whose activation waits for this submission.</summary>
        public GrainId Root { get; } = root;

        public TaskCompletionSource<GlobalTicket> Ticket { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);
    }

    private sealed class GlobalBatch(long gbid, int[] workers)
    {
        public long Gbid { get; } = gbid;

        public int[] Workers { get; } = workers;

        public HashSet<int> Voted { get; } = [];

        public bool Committing { get; set; }

        /// <summary>Completes when the commit record is durable (at once without a log), fails if it could not be confirmed.</summary>
        public TaskCompletionSource Written { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public long EmittedAt { get; } = System.Diagnostics.Stopwatch.GetTimestamp();
    }
}
