using System.Collections.Concurrent;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Snapper.Coordination;
using Snapper.Diagnostics;
using Snapper.Hosting;
using Snapper.Logging;
using Orleans.Serialization;
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
internal sealed class PactService : IPactOrdering, IBatchStatus, IBatchCompletionSink, IDisposable
{
    private const int MinTidRange = 4_096;
    private readonly object _gate = new();
    private readonly PactCoordinator[] _ring;
    private readonly SortedDictionary<long, PactBatch> _uncommitted = new();

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
    private readonly Serializer _serializer;
    private readonly SnapperMetrics _metrics;
    private readonly ILogger<PactService> _logger;
    private readonly bool _skipHybridGate;
    private readonly TimeSpan _logWriteTimeout;
    private readonly int _queueCapacity;
    private readonly SemaphoreSlim _queueRoom;
    private readonly HybridScheduling _hybrid;
    // Bids in (From, To] were aborted; the oldest ranges are forgotten beyond a bound, and a bid at or below
    // _forgottenBelow is then reported as not committed (an ACT asking about it aborts, which is always safe).
    private readonly Queue<(long From, long To)> _abortedRanges = new();
    private long _forgottenBelow = -1;
    private long _lastCommittedBid = -1;
    private long _deliveredBid = -1;
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

    public PactService(IOptions<SnapperOptions> options, IGrainFactory grains, SnapperMetrics metrics, ILogger<PactService> logger,
        WriteAheadLog log, Serializer serializer, SnapperTestHooks testHooks)
    {
        Log = log;
        _serializer = serializer;
        _grains = grains;
        _metrics = metrics;
        _logger = logger;
        _skipHybridGate = testHooks.SkipHybridGate;
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
        metrics.ObserveEntries("pact.prev_bids", "Actors in the token's prev_bid map.", () => Sizes.PrevBids);
        metrics.ObserveEntries("pact.doomed", "Doom marks of failed PACTs whose batch has not resolved.", () => Sizes.Doomed);
        metrics.ObserveEntries("pact.uncommitted", "Uncommitted PACT batches.", () => Sizes.Uncommitted);
        metrics.ObserveEntries("pact.aborted_ranges", "Remembered ranges of aborted batches (bounded at 4,096).", () => Sizes.AbortedRanges);
    }

    public void Dispose() => _watchdog.Dispose();

    /// <summary>The silo's write-ahead log; BatchComplete and BatchCommit records go there before the messages they stand for.</summary>
    public WriteAheadLog Log { get; }

    /// <summary>Sizes of what this service keeps, for the soak report and tests.</summary>
    public (int Schedules, int PrevBids, int Doomed, int Uncommitted, int AbortedRanges) Sizes
    {
        get
        {
            lock (_gate)
            {
                return (_schedules.Count, _prevBidCount, _doomed.Count, _uncommitted.Count, _abortedRanges.Count);
            }
        }
    }

    private int _prevBidCount;

    public void SubBatchCompleted(long bid, GrainId actor, object? version, long seq)
    {
        if (Log.Enabled)
        {
            _ = LogThenCompleteAsync(bid, actor, version, seq);
        }
        else
        {
            BatchComplete(bid, actor);
        }
    }

    /// <summary>
    /// BatchComplete from <paramref name="actor"/>, after its new state (if the sub-batch took a copy) is logged
    /// (thesis Fig. 3.7): queued ahead of the batch's commit record on the ordered logger, or, with several loggers,
    /// durable on the actor's own (<see cref="WriteAheadLog.StatesDurableBeforeVote"/>). If the write fails, the
    /// batch aborts: its vote cannot be trusted to survive a crash.
    /// </summary>
    private async Task LogThenCompleteAsync(long bid, GrainId actor, object? version, long seq)
    {
        if (version is not null)
        {
            try
            {
                var written = Log.AppendStateAsync(actor, LogRecord.StateWritten(LoggedTxnKind.Batch, bid, actor, seq, _serializer.SerializeToArray(version)));
                if (Log.StatesDurableBeforeVote)
                {
                    await written.WaitAsync(_logWriteTimeout);
                }
            }
            catch (Exception exception)
            {
                Abort(new PactTicket(bid, bid), new TransactionAbortedException(bid, AbortReason.PrepareFailed,
                    $"actor {actor} could not log its state for batch {bid}: {exception.Message}"));
                return;
            }
        }

        BatchComplete(bid, actor);
    }

    /// <summary>Every batch with a bid at or below this is committed or aborted.</summary>
    public long ResolvedBid => Volatile.Read(ref _resolvedBid);

    public ActorSchedule ScheduleOf(GrainId actor) =>
        _schedules.GetOrAdd(actor, static (id, service) => new ActorSchedule(id, service, service, service._hybrid, service._skipHybridGate), this);

    /// <summary>
    /// Submits a PACT to the coordinator its first actor hashes to; completes when the PACT has a tid and its batch was
    /// emitted. Bounded by ExecutionTimeout: a PACT not ordered by then is withdrawn (or, if it was emitted at that
    /// very moment, its batch is aborted), and the submission fails with <see cref="AbortReason.OrderingFailed"/>.
    /// </summary>
    public async Task<PactTicket> SubmitAsync(GrainId root, ActorAccessInfo accessInfo)
    {
        // Backpressure: a submission takes a place in the silo's ordering queue first, and gives it back when its PACT
        // was drained into a batch (or withdrawn), so that a ring slower than the load slows the submitters down.
        if (!await _queueRoom.WaitAsync(_executionTimeout))
        {
            throw new TransactionAbortedException(0, AbortReason.OrderingFailed,
                $"the PACT ordering queue stayed full ({_queueCapacity}) for {_executionTimeout}; nothing of it ran.");
        }

        var coordinator = _ring[root.GetUniformHashCode() % (uint)_ring.Length];
        var pending = coordinator.Enqueue(accessInfo);

        // Parking and taking the token are both full fences (Interlocked), so of a submitter that enqueues and then
        // takes the token, and a ring that parks it and then looks for work, at least one sees the other's write.
        if (Interlocked.Exchange(ref _parked, null) is { } token)
        {
            Pass(token, coordinator.Index);
        }

        try
        {
            return await pending.Ticket.Task.WaitAsync(_executionTimeout);
        }
        catch (TimeoutException)
        {
            // Emission completes the ticket only if it was not withdrawn first; a withdrawn PACT's batch is aborted there.
            if (pending.Ticket.TrySetCanceled())
            {
                throw new TransactionAbortedException(0, AbortReason.OrderingFailed, $"it was not ordered within {_executionTimeout}; nothing of it ran.");
            }

            return await pending.Ticket.Task;
        }
    }

    /// <summary>The outcome of a PACT's batch: null if it committed, else why it aborted or that it is in doubt.</summary>
    public Task<SnapperException?> OutcomeAsync(PactTicket ticket)
    {
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
    /// Every batch with a bid at or below this has been delivered to all its actors. Batches emitted later have
    /// larger bids: an actor that saw no batch after an ACT when this was at or above the ACT's max(BeforeSet)
    /// can only ever get batches after the ACT that are larger, so its part of the AfterSet cannot fail the check.
    /// </summary>
    public long DeliveredBid => Volatile.Read(ref _deliveredBid);

    /// <summary>Whether batch <paramref name="bid"/> committed (false while it is running, or if it aborted).</summary>
    public bool IsCommitted(long bid)
    {
        lock (_gate)
        {
            return IsCommittedLocked(bid);
        }
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

    /// <summary>
    /// Whether a batch with a bid from <paramref name="from"/> to <paramref name="to"/> may have aborted (true for
    /// bids so old that their aborts were forgotten). Call once every batch up to <paramref name="to"/> is resolved.
    /// </summary>
    public bool AnyAbortedBetween(long from, long to)
    {
        lock (_gate)
        {
            if (from <= _forgottenBelow)
            {
                return true;
            }

            foreach (var (abortedAfter, abortedTo) in _abortedRanges)
            {
                if (abortedAfter < to && abortedTo >= from && abortedAfter < abortedTo)
                {
                    return true; // bids in (abortedAfter, abortedTo] were aborted, and some lie in [from, to]
                }
            }

            return false;
        }
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
        if (reason.Tid > Volatile.Read(ref _resolvedTid))
        {
            _doomed.TryAdd(reason.Tid, reason);
        }
    }

    /// <summary>Drops the doom marks of the PACTs of resolved batches (under <see cref="_gate"/>).</summary>
    private void ForgetDooms(PactBatch batch)
    {
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
    /// The PACT's first method returned: releases the accesses it declared but did not make. Returns false if a
    /// method of it is still running somewhere (a call that was not awaited).
    /// </summary>
    public bool Finish(long tid, ActorAccessInfo accessInfo)
    {
        var clean = true;
        foreach (var actor in accessInfo.Accesses.Keys)
        {
            clean &= ScheduleOf(actor).Finish(tid);
        }

        return clean;
    }

    /// <summary>BatchComplete: <paramref name="actor"/> finished its sub-batch of <paramref name="bid"/>.</summary>
    public void BatchComplete(long bid, GrainId actor)
    {
        if (!_executing.TryGetValue(bid, out var batch) || batch.Complete() > 0)
        {
            return; // aborted meanwhile, or others still to come
        }

        _executing.TryRemove(bid, out _);
        lock (_gate)
        {
            if (_uncommitted.ContainsKey(bid))
            {
                CommitInOrder();
            }
        }
    }

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
                return; // resolved already, or its commit record is being written: it commits
            }

            AbortUncommittedLocked(failed, reason);
        }
    }

    /// <summary>Aborts every uncommitted batch whose commit record is not being written (under <see cref="_gate"/>).</summary>
    private void AbortUncommittedLocked(PactTicket failed, TransactionAbortedException reason)
    {
        // Batches whose commit record is being written are a prefix; they commit, the rest abort.
        var batches = _uncommitted.Values.Where(b => !b.Committing).ToArray();
        var keptUpTo = _uncommitted.Values.Where(b => b.Committing).Select(b => b.Bid).DefaultIfEmpty(_lastCommittedBid).Max();
        foreach (var batch in batches)
        {
            _uncommitted.Remove(batch.Bid);
            _executing.TryRemove(batch.Bid, out _);
        }

        _notCommitting.Clear();

        _abortedRanges.Enqueue((keptUpTo, _lastBid));
        if (_abortedRanges.Count > 4_096)
        {
            _forgottenBelow = _abortedRanges.Dequeue().To;
        }

        Volatile.Write(ref _resolvedBid, Math.Max(_resolvedBid, _lastBid));
        TransactionAbortedException ReasonFor(long bid, long tid) => tid == reason.Tid
            ? reason
            : new TransactionAbortedException(tid, AbortReason.CascadingAbort, $"transaction {reason.Tid} of batch {failed.Bid} failed ({reason.Reason}); batch {bid} was not committed yet.");
        foreach (var actor in batches.SelectMany(b => b.Participants).Distinct())
        {
            ScheduleOf(actor).AbortAfter(keptUpTo, ReasonFor);
        }

        foreach (var batch in batches)
        {
            ForgetDooms(batch);
            batch.Outcome.TrySetResult(batch.Bid == failed.Bid ? reason : new TransactionAbortedException(
                reason.Tid, reason.Reason == AbortReason.LogWriteFailed ? AbortReason.LogWriteFailed : AbortReason.CascadingAbort,
                $"batch {failed.Bid} failed ({reason.Reason})."));
        }

        _logger.LogDebug("PACT {Tid} failed ({Reason}); aborted {Count} uncommitted batch(es)", reason.Tid, reason.Reason, batches.Length);
    }

    /// <summary>
    /// Aborts the oldest batch, and so every later one, if it has been running longer than ExecutionTimeout. A batch
    /// whose commit record is being written is bounded by LogWriteTimeout instead (<see cref="LogThenCommitAsync"/>).
    /// </summary>
    private void AbortOverdue()
    {
        PactBatch? overdue;
        lock (_gate)
        {
            overdue = _uncommitted.Count > 0 ? _uncommitted.First().Value : null;
        }

        if (overdue is not null && !overdue.Committing && System.Diagnostics.Stopwatch.GetElapsedTime(overdue.EmittedAt) > _executionTimeout)
        {
            _logger.LogWarning("PACT batch {Bid} did not commit within {Timeout}; aborting it and every later batch", overdue.Bid, _executionTimeout);
            Abort(new PactTicket(overdue.Bid, overdue.Bid), new TransactionAbortedException(overdue.Bid, AbortReason.ExecutionTimeout,
                $"its batch {overdue.Bid} did not commit within {_executionTimeout}."));
        }
    }

    /// <summary>
    /// Commits, in bid order, every batch at the head that all participants reported complete. With a log, each
    /// such batch's BatchCommit record is appended as soon as the batch is ready, without waiting for the records
    /// appended before it (they all go to one logger, which keeps them in order, see
    /// <see cref="WriteAheadLog.AppendInOrderAsync"/>); a batch is applied (actors install its versions, its
    /// clients hear) once its record is durable and every earlier batch has been applied.
    /// </summary>
    private void CommitInOrder()
    {
        if (!Log.Enabled)
        {
            ApplyCommits();
            return;
        }

        if (_commitStopped)
        {
            return;
        }

        List<PactBatch>? ready = null;
        while (_notCommitting.TryPeek(out var batch) && batch.Pending == 0)
        {
            _notCommitting.Dequeue();
            batch.Committing = true;
            (ready ??= []).Add(batch);
        }

        if (ready is not null)
        {
            _ = LogThenCommitAsync(ready);
        }
    }

    private async Task LogThenCommitAsync(List<PactBatch> batches)
    {
        Exception? failure = null;
        try
        {
            await Log.AppendInOrderAsync([.. batches.Select(batch => LogRecord.Committed(LoggedTxnKind.Batch, batch.Bid))]).WaitAsync(_logWriteTimeout);
        }
        catch (LogWriteRefusedException refused)
        {
            // Refused before anything was written: these batches certainly did not commit.
            lock (_gate)
            {
                _logger.LogCritical(refused, "BatchCommit records for batches {First}..{Last} were refused by the log; PACT commits are stopped", batches[0].Bid, batches[^1].Bid);
                _commitStopped = true;
                foreach (var batch in batches)
                {
                    batch.Committing = false;
                }

                var reason = new TransactionAbortedException(batches[0].Bid, AbortReason.LogWriteFailed, $"the write-ahead log refused its commit record: {refused.Message}");
                AbortUncommittedLocked(new PactTicket(batches[0].Bid, batches[0].Bid), reason);
            }

            return;
        }
        catch (Exception exception)
        {
            failure = exception;
        }

        lock (_gate)
        {
            if (failure is not null)
            {
                // Unknown whether the records reached the disk: recovery will decide. The clients of these batches hear
                // "in doubt", never "aborted" or "committed"; commits stop (the log refuses later writes after a failed
                // one anyway), and every batch not yet committing aborts, so nobody waits for a commit that cannot come.
                _logger.LogCritical(failure, "BatchCommit records for batches {First}..{Last} were not confirmed durable; their outcome is in doubt and PACT commits are stopped", batches[0].Bid, batches[^1].Bid);
                _commitStopped = true;
                _inDoubtFrom = Math.Min(_inDoubtFrom, batches[0].Bid);
                ReportInDoubt(batches, failure);

                // Batches not yet committing abort; later groups still committing are left to their own continuation
                // (their records are queued after these, so they end in doubt too).
                if (_uncommitted.Values.Any(b => !b.Committing))
                {
                    AbortUncommittedLocked(new PactTicket(batches[0].Bid, batches[0].Bid),
                        new TransactionAbortedException(batches[0].Bid, AbortReason.LogWriteFailed, "PACT commits stopped after a failed log write."));
                }

                Volatile.Write(ref _resolvedBid, Math.Max(_resolvedBid, batches[^1].Bid));
                return;
            }

            if (_commitStopped && batches[0].Bid > _inDoubtFrom)
            {
                // Durable after an earlier group was reported in doubt (a stalled write that finished late): the disk
                // may well hold both, but this silo dropped the earlier one's versions, so it cannot apply these.
                ReportInDoubt(batches, new TimeoutException("an earlier commit record was not confirmed durable in time"));
                return;
            }

            foreach (var batch in batches)
            {
                batch.CommitLogged = true;
            }

            ApplyCommits();
        }
    }

    /// <summary>
    /// Resolves batches whose commit record may or may not be on disk: their clients hear "in doubt", and their versions
    /// leave this silo's memory (recovery, not this silo, decides what they become). Under <see cref="_gate"/>.
    /// </summary>
    private void ReportInDoubt(List<PactBatch> batches, Exception failure)
    {
        foreach (var batch in batches)
        {
            if (_uncommitted.Remove(batch.Bid))
            {
                _executing.TryRemove(batch.Bid, out _);
                ForgetDooms(batch);
                batch.Outcome.TrySetResult(new TransactionInDoubtException(batch.Bid,
                    $"the commit record of its batch {batch.Bid} was not confirmed durable: {failure.Message}"));
            }
        }

        var reason = new TransactionAbortedException(batches[0].Bid, AbortReason.LogWriteFailed, "PACT commits stopped after a failed log write.");
        foreach (var actor in batches.SelectMany(b => b.Participants).Distinct())
        {
            ScheduleOf(actor).AbortAfter(batches[0].Bid - 1, (_, tid) => new TransactionAbortedException(tid, reason.Reason, reason.Message));
        }
    }

    /// <summary>Applies the batches at the head that may commit: all complete and, with a log, their records durable.</summary>
    private void ApplyCommits()
    {
        while (_uncommitted.Count > 0)
        {
            var (bid, batch) = _uncommitted.First();
            if (batch.Pending > 0 || (Log.Enabled && !batch.CommitLogged))
            {
                return;
            }

            _uncommitted.Remove(bid);
            _lastCommittedBid = bid;
            Volatile.Write(ref _resolvedBid, Math.Max(_resolvedBid, bid));
            foreach (var actor in batch.Participants)
            {
                ScheduleOf(actor).Commit(bid);
            }

            ForgetDooms(batch);
            batch.Outcome.TrySetResult(null);
            _metrics.BatchCommitted(System.Diagnostics.Stopwatch.GetElapsedTime(batch.EmittedAt));
        }
    }

    private void Pass(PactToken token, int to) =>
        ThreadPool.UnsafeQueueUserWorkItem(static state => _ = state.Service.VisitAsync(state.To, state.Token), (Service: this, To: to % _ring.Length, Token: token), preferLocal: false);

    /// <summary>The token arrives at coordinator <paramref name="index"/>: form a batch of what it accumulated, emit it, pass the token on.</summary>
    private async Task VisitAsync(int index, PactToken token)
    {
        var pacts = _ring[index].Drain();
        if (pacts.Count > 0)
        {
            _queueRoom.Release(pacts.Count);
        }

        if (pacts.Count > 0)
        {
            try
            {
                if (token.NextTid + pacts.Count > token.RangeEnd)
                {
                    var size = Math.Max(MinTidRange, pacts.Count);
                    token.NextTid = await _grains.GetGrain<ITidSequencerGrain>(0).Reserve(size);
                    token.RangeEnd = token.NextTid + size;
                }

                Emit(pacts, token);
            }
            catch (Exception exception)
            {
                _logger.LogError(exception, "Coordinator {Index} could not order {Count} PACT(s)", index, pacts.Count);
                foreach (var pact in pacts)
                {
                    pact.Ticket.TrySetException(new TransactionAbortedException(0, AbortReason.OrderingFailed,
                        $"no transaction id could be reserved for it: {exception.Message}; nothing of it ran."));
                }
            }
        }

        PassOn(token, index);
    }

    /// <summary>
    /// Passes the token around the ring from <paramref name="from"/> to the next coordinator that has work. A
    /// coordinator with nothing to batch would only hand the token on, so it is skipped; with no work anywhere the
    /// token is parked (no thread spins), and the next submission takes it.
    /// </summary>
    private void PassOn(PactToken token, int from)
    {
        for (var step = 1; step <= _ring.Length; step++)
        {
            var next = (from + step) % _ring.Length;
            if (_ring[next].HasPending)
            {
                Pass(token, next);
                return;
            }
        }

        // Parked with a full fence (not a plain volatile write, which may be reordered after the reads below): a
        // submitter enqueues and then exchanges _parked, this side exchanges _parked and then reads the queues, so at
        // least one of the two sees the other's write and nobody's PACT waits for the next submission.
        Interlocked.Exchange(ref _parked, token);

        // A submission that came after the scan, but before the token was parked, found no parked token to
        // wake: look once more, so it is not left waiting.
        foreach (var coordinator in _ring)
        {
            if (coordinator.HasPending && Interlocked.Exchange(ref _parked, null) is { } again)
            {
                Pass(again, coordinator.Index);
                return;
            }
        }
    }

    private void Emit(List<PendingPact> pacts, PactToken token)
    {
        // Withdrawn submissions (they timed out waiting) are not ordered at all.
        pacts.RemoveAll(pact => pact.Ticket.Task.IsCompleted);
        if (pacts.Count == 0)
        {
            return;
        }

        if (Volatile.Read(ref _commitStopped))
        {
            foreach (var pact in pacts)
            {
                pact.Ticket.TrySetException(new TransactionAbortedException(0, AbortReason.LogWriteFailed,
                    "PACT commits are stopped in this silo after a failed write-ahead log write; restart the silo. Nothing of it ran."));
            }

            return;
        }

        var bid = token.NextTid;
        var subBatches = new Dictionary<GrainId, List<(long Tid, int Accesses)>>();
        var tickets = new PactTicket[pacts.Count];
        for (var i = 0; i < pacts.Count; i++)
        {
            var tid = token.NextTid++;
            tickets[i] = new PactTicket(tid, bid);
            foreach (var (actor, accesses) in pacts[i].AccessInfo.Accesses)
            {
                if (!subBatches.TryGetValue(actor, out var list))
                {
                    subBatches[actor] = list = new List<(long, int)>();
                }

                list.Add((tid, accesses));
            }
        }

        lock (_gate)
        {
            _lastBid = bid;
            var batch = new PactBatch(bid, bid + pacts.Count - 1, [.. subBatches.Keys]);
            _uncommitted.Add(bid, batch);
            _executing[bid] = batch;
            if (Log.Enabled)
            {
                _notCommitting.Enqueue(batch);
            }

            foreach (var (actor, list) in subBatches)
            {
                var prev = token.PrevBid.GetValueOrDefault(actor, -1);
                token.PrevBid[actor] = bid;
                _prevBidCount = token.PrevBid.Count;
                ScheduleOf(actor).Deliver(bid, prev, list);
            }

            Volatile.Write(ref _deliveredBid, bid);
        }

        _metrics.BatchEmitted(pacts.Count);
        for (var i = 0; i < pacts.Count; i++)
        {
            if (!pacts[i].Ticket.TrySetResult(tickets[i]))
            {
                // Withdrawn after it was drained: nobody will run it, so its batch (and the later ones) must not wait.
                Abort(tickets[i], new TransactionAbortedException(tickets[i].Tid, AbortReason.OrderingFailed, "it was withdrawn while being ordered."));
            }
        }
    }
}
