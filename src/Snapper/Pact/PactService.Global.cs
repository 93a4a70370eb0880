using Microsoft.Extensions.Logging;
using Snapper.Cluster;
using Snapper.Logging;

namespace Snapper.Pact;

/// <summary>
/// A worker's side of global PACTs (thesis §4.2.3): submitting to the master, merging global sub-batches into the local
/// order, voting, and applying the master's commit and abort.
/// </summary>
/// <remarks>
/// <para>Invariants (state under <see cref="_gate"/> unless said otherwise):</para>
/// <list type="bullet">
/// <item>Sub-batches arrive from the master one at a time in gbid order (<see cref="GlobalSubBatch.PrevGbid"/> names the
/// previous one) and are emitted by the token in arrival order, each as a local batch of its own with a fresh local bid.
/// So global batches are in gbid order in every worker's local order, and the actors' schedules need nothing new: a
/// global part is a batch whose PACTs carry their global tids (context remapping, §4.2.3.2, is the local bid the worker
/// gives the gbid, <see cref="_globalParts"/>).</item>
/// <item>A global part is voted for once it completed (its states durable, with a log) and every batch before it here is
/// committing, or, with the shortcut, a global part already voted for. A voted part is the master's: a local failure
/// aborts only what follows it, and only the master's abort drops it.</item>
/// <item>No local batch after a global part commits before the master decided that part (batches commit in bid order).</item>
/// <item>The master's abort of a gbid is recorded (<see cref="_abortedGlobal"/>) and applied to its part in one step, and a
/// part is registered only in a step that finds no abort of its gbid recorded: whichever comes first, the part is dropped
/// (a part merged after its abort would run, be voted for, and hold every later part here behind a vote the master
/// ignores, until this worker asks and drops the later parts the master committed).</item>
/// </list>
/// </remarks>
internal sealed partial class PactService
{
    // gbid -> local bid of every global part emitted here and not resolved; gtid -> local bid for their PACTs.
    private readonly Dictionary<long, long> _globalParts = new();
    private readonly Dictionary<long, long> _globalTidBids = new();
    // Sub-batches that arrived and wait for the token, in arrival (gbid) order.
    private readonly Queue<GlobalSubBatch> _globalArrived = new();
    // Callers waiting for a gbid to be merged here (the first actor, or a call that outran the sub-batch).
    private readonly Dictionary<long, TaskCompletionSource<long>> _globalWaiters = new();
    // Gbid ranges the master aborted (bounded, oldest forgotten): a sub-batch in one is not emitted.
    private readonly Queue<(long From, long To)> _abortedGlobal = new();
    private long _lastGlobalArrived = -1;
    private long _lastGlobalEmitted = -1;
    // The master incarnation the last merged sub-batch came from (Guid.Empty before the first). A voted part of an earlier
    // one will hear no decision from the master it was voted to: it is asked about at once (AskAboutSilentVotes).
    private Guid _masterEpoch;

    private bool IsClustered => _placement.Clustered;

    /// <summary>Whether every actor of the declaration is on this worker (always, embedded).</summary>
    private bool IsLocal(ActorAccessInfo accessInfo)
    {
        if (!IsClustered)
        {
            return true;
        }

        foreach (var actor in accessInfo.Accesses.Keys)
        {
            if (_placement.WorkerOf(actor) != _workerIndex)
            {
                return false;
            }
        }

        return true;
    }

    /// <summary>A PACT spanning workers: ordered by the master, then merged here; the ticket holds its global tid and local bid.</summary>
    private async Task<PactTicket> SubmitGlobalAsync(GrainId root, ActorAccessInfo accessInfo)
    {
        // The master orders the copy, and the PACT is finished by it: the caller may change its own object meanwhile.
        _testHooks.BeforePactOrdered?.Invoke(accessInfo);
        accessInfo = accessInfo.Snapshot();
        GlobalTicket global;
        try
        {
            global = await _grains.GetGrain<IGlobalCoordinatorGrain>(0).Submit(accessInfo, root).WaitAsync(_executionTimeout);
        }
        catch (TransactionAbortedException)
        {
            throw;
        }
        catch (Exception exception)
        {
            throw new TransactionAbortedException(0, AbortReason.OrderingFailed, $"the master could not order it ({exception.Message}); nothing of it ran.");
        }

        var bid = await WhenGlobalMergedAsync(global.Gbid, global.Gtid);
        var workers = 0L;
        foreach (var actor in accessInfo.Accesses.Keys)
        {
            workers |= 1L << _placement.WorkerOf(actor);
        }

        return new PactTicket(global.Gtid, bid) { Global = new GlobalPlace(global.Gbid, workers, accessInfo) };
    }

    /// <summary>
    /// The local bid of global batch <paramref name="gbid"/> once it is merged here; fails if the master aborted it, or if
    /// it does not arrive within ExecutionTimeout.
    /// </summary>
    public Task<long> WhenGlobalMergedAsync(long gbid, long tid)
    {
        TaskCompletionSource<long> waiter;
        lock (_gate)
        {
            if (_globalParts.TryGetValue(gbid, out var bid))
            {
                return Task.FromResult(bid);
            }

            if (IsGlobalAborted(gbid) || gbid <= _lastGlobalEmitted)
            {
                return Task.FromException<long>(new TransactionAbortedException(tid, AbortReason.CascadingAbort, $"its global batch {gbid} was aborted."));
            }

            if (!_globalWaiters.TryGetValue(gbid, out waiter!))
            {
                _globalWaiters[gbid] = waiter = new TaskCompletionSource<long>(TaskCreationOptions.RunContinuationsAsynchronously);
            }
        }

        return Bounded(waiter.Task, gbid, tid);

        async Task<long> Bounded(Task<long> merged, long gbid, long tid)
        {
            try
            {
                return await merged.WaitAsync(_executionTimeout);
            }
            catch (TimeoutException)
            {
                lock (_gate)
                {
                    // Nobody else waits on it past the bound: the entry must not outlive the wait.
                    if (_globalWaiters.TryGetValue(gbid, out var waiting) && waiting.Task == merged)
                    {
                        _globalWaiters.Remove(gbid);
                    }
                }

                throw new TransactionAbortedException(tid, AbortReason.OrderingFailed, $"its global batch {gbid} did not reach worker {_workerIndex} within {_executionTimeout}.");
            }
        }
    }

    /// <summary>
    /// Completes with true once every global sub-batch up to <paramref name="gbid"/> the master sent here has been merged
    /// into this worker's local order (or dropped as aborted), so that their parts are in the actors' schedules; false
    /// if that takes longer than <paramref name="bound"/>. A migration waits for this before it waits for the actor's
    /// schedule to empty: the master may have sent a part for the actor just before the actor froze.
    /// </summary>
    public async Task<bool> WhenGlobalMergedUpToAsync(long gbid, TimeSpan bound)
    {
        var deadline = Environment.TickCount64 + (long)bound.TotalMilliseconds;
        while (true)
        {
            lock (_gate)
            {
                // Set in the same step as the part's registration (or its drop, if aborted): a part dequeued but not yet
                // registered is not counted.
                if (_lastGlobalEmitted >= gbid)
                {
                    return true;
                }
            }

            if (Environment.TickCount64 > deadline)
            {
                return false;
            }

            await Task.Delay(2);
        }
    }

    public TransactionAbortedException Explain(TxnContext context, TransactionAbortedException refused) =>
        refused.Reason == AbortReason.UndeclaredAccess && DroppedHere(context) is { } dropped ? dropped : refused;

    public TransactionAbortedException? DroppedHere(TxnContext context)
    {
        if (context.GlobalBid <= 0)
        {
            return null;
        }

        lock (_gate)
        {
            // Merged here and gone while one of its PACTs still runs: it can only have aborted (a commit waits for the PACT).
            var dropped = IsGlobalAborted(context.GlobalBid) || (context.GlobalBid <= _lastGlobalEmitted && !_globalParts.ContainsKey(context.GlobalBid));
            return dropped ? new TransactionAbortedException(context.Tid, AbortReason.CascadingAbort, $"its global batch {context.GlobalBid} was aborted.") : null;
        }
    }

    private bool IsGlobalAborted(long gbid) => _abortedGlobal.Any(range => gbid >= range.From && gbid <= range.To);

    /// <summary>Whether this worker heard that the master aborted global batch <paramref name="gbid"/> (recent aborts only).</summary>
    internal bool HeardAbortOf(long gbid)
    {
        lock (_gate)
        {
            return IsGlobalAborted(gbid);
        }
    }

    /// <summary>
    /// A sub-batch from the master: the aborts it carries are applied first (each is idempotent), so it is never merged
    /// after a part the master already aborted; then it is queued for the token, which merges it into the local order.
    /// </summary>
    public void DeliverGlobal(GlobalSubBatch subBatch)
    {
        foreach (var abort in subBatch.AbortedBefore)
        {
            AbortGlobal(abort.From, abort.To, abort.Reason);
        }

        lock (_gate)
        {
            if (subBatch.Gbid <= _lastGlobalArrived)
            {
                // A repeated or out-of-order delivery: merged after later parts, it would break the gbid order of this
                // worker's batches (which positions and the commit shortcut rely on).
                _logger.LogWarning("Global sub-batch {Gbid} arrived after {Last}; ignored", subBatch.Gbid, _lastGlobalArrived);
                return;
            }

            if (subBatch.PrevGbid > _lastGlobalArrived)
            {
                // The master sends in order and one at a time; a gap means it restarted or lost a delivery. The order
                // of what arrives is still gbid order, which is all the local merge needs.
                _logger.LogWarning("Global sub-batch {Gbid} names {Prev} as previous, but the last one here was {Last}", subBatch.Gbid, subBatch.PrevGbid, _lastGlobalArrived);
            }

            _lastGlobalArrived = Math.Max(_lastGlobalArrived, subBatch.Gbid);
            _globalArrived.Enqueue(subBatch);
        }

        if (Interlocked.Exchange(ref _parked, null) is { } token)
        {
            Pass(token, 0);
        }
    }

    /// <summary>The gbid of the last global sub-batch that arrived here, merged or still waiting for the token (-1: none).</summary>
    public long LastGlobalArrived
    {
        get
        {
            lock (_gate)
            {
                return _lastGlobalArrived;
            }
        }
    }

    private bool HasGlobalArrived
    {
        get
        {
            lock (_gate)
            {
                return _globalArrived.Count > 0;
            }
        }
    }

    /// <summary>Merges every sub-batch that arrived into the local order (the token holder only), each as a batch of its own.</summary>
    private void EmitGlobal(PactToken token)
    {
        while (true)
        {
            GlobalSubBatch subBatch;
            bool dropped;
            bool newMaster;
            lock (_gate)
            {
                // Each part takes one local bid from the token's range; what does not fit waits for the next visit.
                if (token.NextTid >= token.RangeEnd || !_globalArrived.TryDequeue(out subBatch!))
                {
                    return;
                }

                dropped = DroppedAsAborted(subBatch);
                newMaster = dropped && FollowMasterEpoch(subBatch.MasterEpoch);
            }

            if (!dropped)
            {
                newMaster = MergePart(subBatch, token);
            }

            if (newMaster)
            {
                // The master restarted: what its old incarnation left undecided here is asked about now, not after
                // ExecutionTimeout, since until then this worker votes for no part of the new one (VoteReadyGlobalParts).
                // Asked once this part is merged, so an answer "aborted" drops it too, and reports it (ReportGlobalAborts).
                // A part dropped because the new master aborted it tells of the restart as well: the new master aborts
                // its parts merged after old undecided ones when another worker asks about those, and that abort may
                // reach this worker before the part does. Nothing of the new master is merged here then until this
                // worker has asked, so it must not wait for a merged part to ask.
                AskAboutSilentVotes();
            }
        }
    }

    /// <summary>
    /// Registers a global sub-batch as a local batch of its own, unless the master's abort came meanwhile; returns whether
    /// it came from another master incarnation than the sub-batch before it.
    /// </summary>
    private bool MergePart(GlobalSubBatch subBatch, PactToken token)
    {
        _testHooks.BeforeGlobalPartMerged?.Invoke(_workerIndex, subBatch.Gbid);
        var pacts = token.SubBatches;
        pacts.Clear();
        foreach (var access in subBatch.Accesses)
        {
            pacts.Add(access.Actor, new Scheduling.PactAccess(access.Gtid, access.Accesses, access.Keys is { } keys ? keys.ToHashSet() : null));
        }

        var tids = subBatch.Accesses.Select(a => a.Gtid).Distinct().Order().ToArray();
        TaskCompletionSource<long>? waiter;
        long bid;
        bool newMaster;
        lock (_gate)
        {
            // Checked again in the step that registers the part: the master's abort may have come since the first check
            // (its own message, or carried by a later sub-batch), found no part here to drop, and only been recorded.
            if (DroppedAsAborted(subBatch))
            {
                return FollowMasterEpoch(subBatch.MasterEpoch);
            }

            bid = token.NextTid++;
            var batch = new PactBatch(bid, bid, pacts.Participants()) { Gbid = subBatch.Gbid, GlobalTids = tids, MasterEpoch = subBatch.MasterEpoch };
            Register(batch, pacts);
            _lastGlobalEmitted = subBatch.Gbid; // with the part registered, in one step: a waiter sees both or neither
            _globalParts[subBatch.Gbid] = bid;
            foreach (var tid in tids)
            {
                _globalTidBids[tid] = bid;
            }

            _globalWaiters.Remove(subBatch.Gbid, out waiter);
            newMaster = FollowMasterEpoch(subBatch.MasterEpoch);
        }

        waiter?.TrySetResult(bid);
        _metrics.BatchEmitted(tids.Length);
        return newMaster;
    }

    /// <summary>
    /// Notes the master incarnation a sub-batch came from, merged or dropped (under <see cref="_gate"/>); true when it is
    /// not the one the last sub-batch came from.
    /// </summary>
    private bool FollowMasterEpoch(Guid epoch)
    {
        var changed = epoch != _masterEpoch;
        _masterEpoch = epoch;
        return changed;
    }

    /// <summary>
    /// Drops a sub-batch the master aborted (or that arrives after commits stopped) instead of merging it, under
    /// <see cref="_gate"/>: counted as emitted, and whoever waits for it fails.
    /// </summary>
    private bool DroppedAsAborted(GlobalSubBatch subBatch)
    {
        if (!IsGlobalAborted(subBatch.Gbid) && !_commitStopped)
        {
            return false;
        }

        _lastGlobalEmitted = subBatch.Gbid;
        FailGlobalWaiter(subBatch.Gbid, new TransactionAbortedException(subBatch.Gbid, AbortReason.CascadingAbort, $"its global batch {subBatch.Gbid} was aborted."));
        return true;
    }

    private void FailGlobalWaiter(long gbid, TransactionAbortedException reason)
    {
        if (_globalWaiters.Remove(gbid, out var waiter))
        {
            waiter.TrySetException(reason);
        }
    }

    /// <summary>
    /// Global parts that may now be voted for (under <see cref="_gate"/>, after the local commit pass): in bid order, while
    /// each batch before is committing or (with the shortcut) a voted global part of the same master incarnation; a
    /// running batch, or a local one that waits for a global decision, ends the scan.
    /// </summary>
    private void VoteReadyGlobalParts()
    {
        if (_globalParts.Count == 0)
        {
            return;
        }

        Guid? undecidedEpoch = null;
        foreach (var batch in _uncommitted.Values)
        {
            if (batch.Committing || batch.CommitLogged)
            {
                continue;
            }

            if (!batch.IsGlobal || batch.Pending > 0)
            {
                return;
            }

            if (!batch.Voted)
            {
                if (undecidedEpoch is { } epoch && epoch != batch.MasterEpoch)
                {
                    // Voted parts of a previous master are still undecided: the new one would not order this after them.
                    return;
                }

                batch.Voted = true;
                batch.VotedAt = System.Diagnostics.Stopwatch.GetTimestamp();
                var gbid = batch.Gbid;
                if (_testHooks.WithholdGlobalVote?.Invoke(_workerIndex, gbid) != true)
                {
                    _ = SendAsync(() => _grains.GetGrain<IGlobalCoordinatorGrain>(0).Vote(gbid, _workerIndex), $"vote for global batch {gbid}");
                }
            }

            if (!batch.GloballyCommitted)
            {
                if (!_globalShortcut)
                {
                    return;
                }

                undecidedEpoch ??= batch.MasterEpoch;
            }
        }
    }

    /// <summary>
    /// Asks the master about voted global parts that heard no decision within ExecutionTimeout (a commit or abort message
    /// was lost), or that an earlier master incarnation emitted (it restarted, and took their decision with it unless it
    /// logged a commit), one question per part at a time, and applies the answer.
    /// </summary>
    private void AskAboutSilentVotes()
    {
        List<long>? silent = null;
        lock (_gate)
        {
            foreach (var batch in _uncommitted.Values)
            {
                if (batch.Voted && !batch.GloballyCommitted && !batch.Asking
                    && (batch.MasterEpoch != _masterEpoch || System.Diagnostics.Stopwatch.GetElapsedTime(batch.VotedAt) > _executionTimeout))
                {
                    batch.Asking = true;
                    (silent ??= []).Add(batch.Gbid);
                }
            }
        }

        foreach (var gbid in silent ?? [])
        {
            _ = AskOutcomeAsync(gbid);
        }
    }

    /// <summary>
    /// Asks the master how global batch <paramref name="gbid"/>, whose part here voted, ended, and applies the answer. A
    /// question that fails (the master is restarting, or the call still reached its old incarnation's address) is asked
    /// again after a short pause, growing up to a second (or a quarter of ExecutionTimeout, if shorter), for as long as
    /// the part is held here undecided: its PACTs and every batch after it wait for the answer, and only the master may
    /// give it. While a master is down, that is one refused call a second per such part.
    /// </summary>
    private async Task AskOutcomeAsync(long gbid)
    {
        var pause = TimeSpan.FromMilliseconds(50);
        var longestPause = TimeSpan.FromTicks(Math.Clamp(_executionTimeout.Ticks / 4, pause.Ticks, TimeSpan.TicksPerSecond));
        var failures = 0;
        while (true)
        {
            try
            {
                if (_testHooks.DelayOutcomeQuestion?.Invoke(_workerIndex, gbid) is { } held)
                {
                    await held;
                }

                var committed = await _grains.GetGrain<IGlobalCoordinatorGrain>(0).OutcomeOf(gbid, _workerIndex).WaitAsync(_executionTimeout);
                _logger.LogWarning("Worker {Worker} asked about global batch {Gbid} (no decision heard in time, or an earlier master emitted it); the master says {Outcome}", _workerIndex, gbid, committed ? "committed" : "aborted");
                if (committed)
                {
                    await CommitGlobalAsync(gbid);
                    _ = SendAsync(() => _grains.GetGrain<IGlobalCoordinatorGrain>(0).Confirmed(gbid, _workerIndex), $"confirmation of global batch {gbid}");
                }
                else
                {
                    AbortGlobal(gbid, gbid, new TransactionAbortedException(gbid, AbortReason.CascadingAbort, $"its global batch {gbid} was aborted by the master."));
                }

                return;
            }
            catch (Exception exception)
            {
                // Said once as a warning: a master that is down would otherwise fill the log, once a second per part.
                _logger.Log(failures++ == 0 ? LogLevel.Warning : LogLevel.Debug, exception,
                    "Worker {Worker} could not learn the outcome of global batch {Gbid}; asking again in {Pause}", _workerIndex, gbid, pause);
            }

            await Task.Delay(pause);
            pause = TimeSpan.FromTicks(Math.Min(pause.Ticks * 2, longestPause.Ticks));
            lock (_gate)
            {
                if (!_globalParts.TryGetValue(gbid, out var bid) || !_uncommitted.TryGetValue(bid, out var batch) || batch.GloballyCommitted)
                {
                    return; // decided meanwhile (the master's own message came through), or dropped
                }
            }
        }
    }

    /// <summary>The master committed global batch <paramref name="gbid"/>: its part here commits in bid order; completes when it did.</summary>
    public async Task CommitGlobalAsync(long gbid)
    {
        Task<SnapperException?>? outcome;
        lock (_gate)
        {
            if (!_globalParts.TryGetValue(gbid, out var bid) || !_uncommitted.TryGetValue(bid, out var batch))
            {
                outcome = null;
            }
            else
            {
                batch.GloballyCommitted = true;
                outcome = batch.Outcome.Task;
                CommitInOrder();
            }
        }

        if (outcome is null)
        {
            // Not held: committed here already (a repeated message), or this worker restarted after voting, and then
            // its part's states are in its log, in doubt until now; the commit is confirmed once that is recorded.
            if (Log.Enabled && Log.InDoubt.Any(r => r.Kind == LoggedTxnKind.GlobalBatch && r.Id == gbid))
            {
                await Log.ResolveInDoubtAsync(LoggedTxnKind.GlobalBatch, gbid, committed: true).WaitAsync(_logWriteTimeout);
            }

            return;
        }

        if (await outcome.WaitAsync(_logWriteTimeout) is { } failed)
        {
            // In doubt here (the commit record could not be confirmed): not confirmed to the master, which keeps it open.
            throw failed;
        }
    }

    /// <summary>
    /// The master aborted global batches <paramref name="fromGbid"/>..<paramref name="toGbid"/>: their parts here, and every
    /// local batch after the first of them (it may have read their writes), abort; batches before it are untouched.
    /// </summary>
    public void AbortGlobal(long fromGbid, long toGbid, TransactionAbortedException reason)
    {
        lock (_gate)
        {
            _abortedGlobal.Enqueue((fromGbid, toGbid));
            if (_abortedGlobal.Count > 4_096)
            {
                _abortedGlobal.Dequeue();
            }

            foreach (var gbid in _globalWaiters.Keys.Where(g => g >= fromGbid && g <= toGbid).ToArray())
            {
                FailGlobalWaiter(gbid, new TransactionAbortedException(gbid, reason.Reason == AbortReason.ExecutionTimeout ? reason.Reason : AbortReason.CascadingAbort, reason.Message, reason));
            }

            var first = _uncommitted.Values.FirstOrDefault(b => b.IsGlobal && b.Gbid >= fromGbid && b.Gbid <= toGbid);
            if (first is not null)
            {
                AbortFromLocked(first.Bid, new PactTicket(reason.Tid, first.Bid), reason, dropVoted: true);
            }
        }
    }

    /// <summary>Finish from another worker: waits until the part is merged here, so the release is not lost before its sub-batch.</summary>
    public async Task<bool> FinishMergedAsync(long gtid, long gbid, GrainId[] actors)
    {
        if (_testHooks.DelayGlobalFinish?.Invoke(_workerIndex, gtid) is { } delayed)
        {
            await delayed;
        }

        try
        {
            await WhenGlobalMergedAsync(gbid, gtid);
        }
        catch (TransactionAbortedException)
        {
            return true; // aborted: nothing of it is left here to release
        }

        return FinishHere(gtid, actors);
    }

    /// <summary>Global PACT <paramref name="gtid"/>'s first method returned: releases its unused accesses to these actors of this worker.</summary>
    public bool FinishHere(long gtid, GrainId[] actors)
    {
        var clean = true;
        foreach (var actor in actors)
        {
            clean &= ScheduleOf(actor).Finish(gtid);
        }

        return clean;
    }

    /// <summary>
    /// Finish across workers: this worker's actors directly, each other worker's through its endpoint. A worker that does
    /// not answer within ExecutionTimeout, or whose endpoint fails, fails the PACT with <see cref="AbortReason.PrepareFailed"/>:
    /// its part may still hold the accesses the finish releases, so it may never complete. That is timing, not the PACT's
    /// code, so the reason is a transient one; only a worker that answers "still running" makes it an unawaited call.
    /// </summary>
    private async Task<TransactionAbortedException?> FinishGlobalAsync(long tid, long gbid, ActorAccessInfo accessInfo)
    {
        var here = new List<GrainId>();
        var elsewhere = new Dictionary<int, List<GrainId>>();
        foreach (var actor in accessInfo.Accesses.Keys)
        {
            var worker = _placement.WorkerOf(actor);
            if (worker == _workerIndex)
            {
                here.Add(actor);
            }
            else
            {
                if (!elsewhere.TryGetValue(worker, out var list))
                {
                    elsewhere[worker] = list = [];
                }

                list.Add(actor);
            }
        }

        var workers = elsewhere.Keys.ToArray();
        var remote = workers.Select(w => _grains.GetGrain<IWorkerPactGrain>(w).Finish(tid, gbid, [.. elsewhere[w]])).ToArray();
        var clean = FinishHere(tid, [.. here]);
        try
        {
            await Task.WhenAll(remote).WaitAsync(_executionTimeout);
        }
        catch (Exception exception)
        {
            var silent = string.Join(", ", workers.Where((_, i) => !remote[i].IsCompletedSuccessfully));
            var why = remote.Any(call => !call.IsCompleted) ? $"no answer within ExecutionTimeout ({_executionTimeout})" : exception.Message;
            _logger.LogDebug(exception, "Finish of global PACT {Tid} did not reach every worker", tid);
            return new TransactionAbortedException(tid, AbortReason.PrepareFailed,
                $"worker(s) {silent} did not confirm the release of the accesses it declared there and did not make: {why}.");
        }

        clean &= remote.All(finished => finished.Result);
        return clean ? null : StillRunning(tid);
    }

    /// <summary>
    /// Tells the master that global parts aborted here: the smallest gbid of each master incarnation. The master aborts every
    /// batch after the one it is told, but a restarted master never heard of its predecessor's gbids and ignores them, so
    /// the first part of its own is named too (parts of an old master are followed by those of the new one after a restart).
    /// </summary>
    private void ReportGlobalAborts(IEnumerable<PactBatch> aborted, TransactionAbortedException reason)
    {
        foreach (var first in aborted.Where(b => b.IsGlobal).GroupBy(b => b.MasterEpoch).Select(parts => parts.Min(b => b.Gbid)))
        {
            _ = SendAsync(() => _grains.GetGrain<IGlobalCoordinatorGrain>(0).Abort(first, reason), $"abort of global batch {first}");
        }
    }

    /// <summary>Forgets the global ids of a resolved global part (under <see cref="_gate"/>).</summary>
    private void ForgetGlobal(PactBatch batch)
    {
        if (!batch.IsGlobal)
        {
            return;
        }

        _globalParts.Remove(batch.Gbid);
        foreach (var tid in batch.GlobalTids!)
        {
            _globalTidBids.Remove(tid);
        }
    }

    private async Task SendAsync(Func<Task> send, string what)
    {
        try
        {
            await Task.Run(send);
        }
        catch (Exception exception)
        {
            // The master's watchdog bounds every global batch: one whose vote or abort was lost aborts on time.
            _logger.LogWarning(exception, "Worker {Worker}: the {What} did not reach the master", _workerIndex, what);
        }
    }
}
