using Snapper.Hosting;
using Snapper.Hybrid;
using Snapper.Pact;

namespace Snapper.Scheduling;

/// <summary>
/// One actor's local schedule (thesis §3.3.2.3, §3.3.4.1): the PACT sub-batches delivered to it, chained by
/// prev_bid, the PACTs of the running sub-batch in tid order, and the gate between batches and ACTs.
/// </summary>
/// <remarks>
/// Invariants (all state under <see cref="Gate"/>):
/// <list type="bullet">
/// <item>Sub-batches start in the order of their prev_bid chain (so in bid order). An <i>exclusive</i> sub-batch runs
/// alone: it starts only when the sub-batch named by its prev_bid has completed here (or that batch is already resolved,
/// committed or aborted, everywhere), and nothing starts after it until it completed. Inside it only the PACT with the
/// lowest unfinished tid runs.</item>
/// <item>A <i>keyed</i> sub-batch (key-level concurrency control, thesis §5.3.3.3: every PACT of it declared keys here,
/// and the actor's state versions take changes per key, <see cref="IActorStateVersions.PipelinesKeys"/>) starts as soon
/// as the one before it started, if that one is keyed too. Its PACTs queue per declared key, in start order and then
/// tid order (<see cref="_lanes"/>); a PACT uses a key (<see cref="EnterKeysAsync"/>) only at the head of its queue.
/// Every key's queue follows one global order (bids, then tids), so no PACT waits for a later one, and a conflict on a
/// key orders the two PACTs as the batches are ordered: the schedule stays serializable and deadlock-free.</item>
/// <item>A PACT finishes here when it has made its declared number of accesses, or when its first actor's method
/// returned (declared accesses it never made are released then, so later batches never wait for them). A keyed PACT
/// keeps its keys until then, and leaves its changes to the state versions when it finishes.</item>
/// <item>Sub-batches complete (and vote, <see cref="CompletedSubBatch"/>) in start order, even a keyed one whose PACTs
/// finished before an earlier one's: so the versions they log get seqs in bid order, the order they commit in.</item>
/// <item>Hybrid, <see cref="HybridScheduling.SerializabilityCheck"/> (§3.3.4.1): an arriving ACT is placed after the
/// last batch delivered here (<see cref="ActEntry.After"/>), one place per ACT, which its parallel calls share; it enters
/// once that batch has completed here, and a batch starts only when every ACT placed before it (smaller <c>After</c>)
/// has ended here. So an ACT never sees a half-done batch and a batch never sees an ACT's uncommitted writes; what
/// remains (cycles across actors) is the first actor's check, fed by <see cref="Before"/> and <see cref="MinAfter"/>
/// (batch positions, see <see cref="BatchPosition"/>: within one actor they follow the bids, since its batches are all
/// of one worker).</item>
/// <item>Hybrid, <see cref="HybridScheduling.CommittedBatchesOnly"/>: an ACT enters only when no batch is uncommitted
/// here, and a batch starts only when no ACT is inside. Then every conflict edge X → Y between transactions on this
/// actor means Y committed after X, and commit order is a serialization order across all actors.</item>
/// <item>Nothing here calls the batch status or the completion sink while holding the lock: the PACT service calls in
/// with its own lock held, and the opposite order would deadlock. Completed batches are reported after release.</item>
/// </list>
/// </remarks>
internal sealed class ActorSchedule(GrainId actor, IBatchStatus batchStatus, IBatchCompletionSink completions, HybridScheduling hybrid,
    SnapperTestHooks? hooks = null, Diagnostics.SnapperMetrics? metrics = null)
{
    /// <summary>
    /// The last batch the PACT ring emitted to this actor (the prev_bid of the next one it emits here), -1 before the
    /// first. Read and written only by the token holder, under the PACT service's lock and never under <see cref="Gate"/>:
    /// bids are emitted one batch at a time, so it names an emitted batch, older ones resolved or aborted being harmless
    /// (a schedule treats them as done).
    /// </summary>
    public long LastEmittedBid { get; set; } = -1;

    // Most of the time one sub-batch of one PACT: kept inline (see InlineFirstMap), not in dictionaries of their own.
    private InlineFirstMap<SubBatch> _batches;
    private InlineFirstMap<PactSlot> _pacts;
    // ACTs placed here, made when the first ACT arrives: an actor only PACTs reach never has one (with _dropped, two
    // objects and about 120 bytes less per actor).
    private Dictionary<long, ActEntry>? _acts;
    private readonly bool _gateOff = hooks is { SkipHybridGate: true } && hybrid == HybridScheduling.CommittedBatchesOnly;
    // Started and not completed here, in start order: one exclusive sub-batch, or keyed ones only.
    private readonly List<SubBatch> _started = new();
    // Per key used by a started keyed sub-batch: its unfinished PACTs that declared it, in the order they may use it.
    private Dictionary<object, LinkedList<long>>? _lanes; // made when a keyed sub-batch first starts here
    // The bids the latest cascading aborts dropped here, as (keptUpTo, last dropped]: the token may still name them as prev_bid.
    private Queue<(long After, long UpTo)>? _dropped; // made at the first cascading abort that drops a batch here
    private long _lastCompletedBid = -1;
    private long _lastCommittedBid = -1;
    private long _actPosition = -1;
    private BatchPosition _endedActsMaxBefore = BatchPosition.None;
    private IActorStateVersions? _versions;

    /// <summary>
    /// The lock of this schedule and of the actor's state versions: the schedule object itself (internal, and locked by
    /// nothing else), so that taking it touches no memory besides the schedule's own (see <see cref="InlineFirstMap{TValue}"/>).
    /// </summary>
    public object Gate => this;

    public GrainId Actor => actor;

    // The activation that takes this actor's calls inside the silo directly (Actors.ILocalCallee), kept here rather than
    // in a map of its own: the submitter of a PACT looks up every declared actor's schedule, so the calls its first
    // method makes moments later find their callees in map entries that are still in the cache (a second map of all
    // actors cost the call a miss on its bucket, node and key, about 3 % of a SmallBank PACT's CPU).
    private Actors.ILocalCallee? _localCallee;

    /// <summary>The activation of this actor that takes local calls, if one does now.</summary>
    public Actors.ILocalCallee? LocalCallee => Volatile.Read(ref _localCallee);

    /// <summary>Marks <paramref name="activation"/> as the one that takes local calls here (a later activation replaces an earlier one).</summary>
    public void ServeLocalCalls(Actors.ILocalCallee activation) => Volatile.Write(ref _localCallee, activation);

    /// <summary>Stops sending local calls to <paramref name="activation"/>; a later activation that took over stays.</summary>
    public void StopLocalCalls(Actors.ILocalCallee activation) => Interlocked.CompareExchange(ref _localCallee, null, activation);

    /// <summary>Sub-batches delivered here and not yet committed or aborted.</summary>
    public int UncommittedBatchCount
    {
        get
        {
            lock (Gate)
            {
                return _batches.Count;
            }
        }
    }

    /// <summary>A method of PACT <paramref name="tid"/> running here started a call (counted until it returns).</summary>
    public void CallStarted(long tid)
    {
        lock (Gate)
        {
            if (_pacts.TryGetValue(tid, out var slot))
            {
                slot.OutstandingCalls++;
            }
        }
    }

    /// <summary>A call started here by PACT <paramref name="tid"/> returned (or failed).</summary>
    public void CallEnded(long tid)
    {
        lock (Gate)
        {
            if (_pacts.TryGetValue(tid, out var slot))
            {
                slot.OutstandingCalls--;
            }
        }
    }

    /// <summary>
    /// Calls PACT <paramref name="tid"/> started here that have not returned, as seen by a method of it that is about to
    /// return: 0 while another method of the PACT still runs here (a nested call back into this actor), since that
    /// method's caller is the one waiting for those calls.
    /// </summary>
    public int UnawaitedCalls(long tid)
    {
        lock (Gate)
        {
            return _pacts.TryGetValue(tid, out var slot) && slot.Running <= 1 ? slot.OutstandingCalls : 0;
        }
    }

    /// <summary>Connects the activated actor's state, so batches can record, commit and drop versions.</summary>
    public void Attach(IActorStateVersions versions)
    {
        lock (Gate)
        {
            _versions = versions;
        }
    }

    /// <summary>
    /// Whether <paramref name="versions"/> are the ones this schedule records, commits and logs: the state of the actor's
    /// current core in this silo (attached last). Exact under <see cref="Gate"/>, which <see cref="Attach"/> takes.
    /// </summary>
    public bool Records(IActorStateVersions versions) => ReferenceEquals(Volatile.Read(ref _versions), versions);

    /// <summary>
    /// A sub-batch arrives from the coordinator that emitted it; <paramref name="position"/> is its batch's place in the
    /// order the hybrid check compares (its bid on an embedded silo).
    /// </summary>
    public void Deliver(long bid, long prevBid, IReadOnlyList<PactAccess> pacts, BatchPosition? position = null)
    {
        var completed = default(Completions); // allocates only when more than one sub-batch completes at once
        lock (Gate)
        {
            var tids = new long[pacts.Count];
            for (var i = 0; i < pacts.Count; i++)
            {
                tids[i] = pacts[i].Tid;
            }

            Array.Sort(tids);
            var batch = new SubBatch(bid, prevBid, tids, position ?? BatchPosition.Embedded(bid));
            for (var i = 0; i < pacts.Count; i++) // by index: a foreach over the interface would box its enumerator
            {
                var pact = pacts[i];
                _pacts.Set(pact.Tid, new PactSlot(batch, pact.Accesses, pact.Keys));
            }

            _batches.Set(bid, batch);
            _actPosition = Math.Max(_actPosition, bid); // ACTs arriving from now on are placed after it
            Pump(ref completed);
        }

        Report(completed);
    }

    /// <summary>
    /// A call of PACT <paramref name="tid"/> arrives here; the returned task completes when it is the PACT's turn.
    /// </summary>
    /// <exception cref="TransactionAbortedException">The PACT did not declare this actor, or declared fewer accesses.</exception>
    public Task EnterAsync(long tid)
    {
        lock (Gate)
        {
            if (!_pacts.TryGetValue(tid, out var slot))
            {
                throw new TransactionAbortedException(tid, AbortReason.UndeclaredAccess,
                    $"it called actor {actor}, which its ActorAccessInfo does not declare (or the transaction already ended).");
            }

            if (slot.Finished || slot.Entered >= slot.Declared)
            {
                throw new TransactionAbortedException(tid, AbortReason.UndeclaredAccess,
                    $"it called actor {actor} more often than the {slot.Declared} time(s) it declared.");
            }

            slot.Entered++;
            slot.Running++;
            if (IsTurn(tid, slot))
            {
                return Task.CompletedTask;
            }

            slot.Turn ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            return slot.Turn.Task;
        }
    }

    /// <summary>Whether PACT <paramref name="tid"/> is scheduled here and not yet committed or dropped.</summary>
    public bool Knows(long tid)
    {
        lock (Gate)
        {
            return _pacts.ContainsKey(tid);
        }
    }

    /// <summary>Whether PACT <paramref name="tid"/> is running a method here now (it may use the state).</summary>
    public bool IsRunning(long tid)
    {
        lock (Gate)
        {
            return _pacts.TryGetValue(tid, out var slot) && slot.Running > 0 && IsTurn(tid, slot);
        }
    }

    /// <summary>
    /// PACT <paramref name="tid"/>, running a method here, wants to use <paramref name="keys"/>. Fails if it declared this
    /// actor by key and not all of them. Completes with true when it may use them in a keyed sub-batch (at the head of
    /// each key's queue; the state versions give it the keys as the PACTs before it left them), with false when it uses
    /// the actor as a whole (its sub-batch runs alone).
    /// </summary>
    /// <exception cref="TransactionAbortedException">A key is not declared (<see cref="AbortReason.UndeclaredAccess"/>).</exception>
    /// <exception cref="TransactionNotActiveException">The PACT is not running a method here.</exception>
    public Task<bool> EnterKeysAsync(long tid, IReadOnlyCollection<object> keys)
    {
        lock (Gate)
        {
            var slot = RunningSlot(tid);
            if (slot.Keys is null)
            {
                return Task.FromResult(false);
            }

            foreach (var key in keys)
            {
                if (!slot.Keys.Contains(key))
                {
                    throw new TransactionAbortedException(tid, AbortReason.UndeclaredAccess,
                        $"it used key '{key}' of actor {actor}, which its ActorAccessInfo does not declare (declared there: {string.Join(", ", slot.Keys.Select(k => $"'{k}'"))}).");
                }
            }

            if (!slot.Batch.Keyed || AtHeads(tid, keys))
            {
                return Task.FromResult(slot.Batch.Keyed);
            }

            // Parallel calls of the PACT may wait here at once, each for its own keys.
            var wait = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            (slot.KeyWaits ??= []).Add((keys, wait));
            return wait.Task;
        }
    }

    /// <summary>
    /// Refuses the use of the whole state by PACT <paramref name="tid"/> if it declared this actor by key (called from
    /// its running method).
    /// </summary>
    /// <exception cref="TransactionAbortedException">It declared keys here (<see cref="AbortReason.UndeclaredAccess"/>).</exception>
    public void RequireDeclaredWhole(long tid)
    {
        lock (Gate)
        {
            if (_pacts.TryGetValue(tid, out var slot) && slot.Keys is not null)
            {
                throw new TransactionAbortedException(tid, AbortReason.UndeclaredAccess,
                    $"it used the whole state of actor {actor}, for which its ActorAccessInfo declares keys only; declare the actor without keys to use all of it.");
            }
        }
    }

    private PactSlot RunningSlot(long tid) => _pacts.TryGetValue(tid, out var slot) && slot.Running > 0 && IsTurn(tid, slot)
        ? slot
        : throw new TransactionNotActiveException(tid, "it is not running a method on this actor (it ended, or the context was kept).");

    private bool AtHeads(long tid, IEnumerable<object> keys)
    {
        foreach (var key in keys)
        {
            if (_lanes is null || !_lanes.TryGetValue(key, out var lane) || lane.First!.Value != tid)
            {
                return false;
            }
        }

        return true;
    }

    /// <summary>The PACT is done here: it leaves its key queues (after its changes went to the versions), and the next ones move up.</summary>
    private void FinishSlot(long tid, PactSlot slot)
    {
        if (slot.Finished)
        {
            return;
        }

        slot.Finished = true;
        slot.Batch.Unfinished--;
        _versions?.PactFinished(tid, slot.Bid);
        LeaveLanes(tid, slot);
        WakeLaneHeads();
    }

    private void LeaveLanes(long tid, PactSlot slot)
    {
        if (!slot.InLanes)
        {
            return;
        }

        slot.InLanes = false;
        foreach (var key in slot.Keys!)
        {
            if (_lanes!.TryGetValue(key, out var lane)) // queued in lanes, so they were made
            {
                lane.Remove(tid);
                if (lane.Count == 0)
                {
                    _lanes.Remove(key); // a key's queue lives only while someone holds or waits for the key
                }
            }
        }
    }

    /// <summary>Lets in every waiting PACT that now heads the queues of all the keys it waits for.</summary>
    private void WakeLaneHeads()
    {
        if (_lanes is not { Count: > 0 } lanes)
        {
            return; // no keyed sub-batch here: the common case, on every PACT's exit
        }

        foreach (var lane in lanes.Values)
        {
            var tid = lane.First!.Value;
            if (_pacts.TryGetValue(tid, out var head) && head.KeyWaits is { Count: > 0 } waits)
            {
                waits.RemoveAll(wait => AtHeads(tid, wait.Keys) && wait.Done.TrySetResult(true));
            }
        }
    }

    /// <summary>A method of PACT <paramref name="tid"/> returned here.</summary>
    public void Exit(long tid)
    {
        var completed = default(Completions); // allocates only when more than one sub-batch completes at once
        lock (Gate)
        {
            if (!_pacts.TryGetValue(tid, out var slot))
            {
                return; // aborted meanwhile
            }

            slot.Running--;
            if (slot.Running == 0 && slot.Entered >= slot.Declared)
            {
                FinishSlot(tid, slot);
                Pump(ref completed);
            }
        }

        Report(completed);
    }

    /// <summary>
    /// The PACT's first method returned: accesses it declared here but never made are released. Returns false if
    /// a method of it is still running here (a call that was not awaited).
    /// </summary>
    public bool Finish(long tid)
    {
        var completed = default(Completions); // allocates only when more than one sub-batch completes at once
        bool clean;
        lock (Gate)
        {
            if (!_pacts.TryGetValue(tid, out var slot) || slot.Finished)
            {
                return true;
            }

            clean = slot.Running == 0;
            if (clean)
            {
                FinishSlot(tid, slot);
                Pump(ref completed);
            }
        }

        Report(completed);
        return clean;
    }

    /// <summary>The coordinator committed batch <paramref name="bid"/> (after every earlier batch).</summary>
    public void Commit(long bid)
    {
        var completed = default(Completions); // allocates only when more than one sub-batch completes at once
        lock (Gate)
        {
            if (_batches.Remove(bid, out var batch))
            {
                foreach (var tid in batch.Tids)
                {
                    _pacts.Remove(tid);
                }

                _versions?.BatchCommitted(bid);
                _lastCommittedBid = bid;
            }

            AdmitActs();
            Pump(ref completed);
        }

        Report(completed);
    }

    /// <summary>
    /// Cascading abort: every batch here after <paramref name="keptUpTo"/> is dropped, with the state it produced. Batches
    /// up to it are uncommitted only because their commit record is being written; they stay and commit.
    /// </summary>
    public void AbortAfter(long keptUpTo, Func<long, long, TransactionAbortedException> reasonFor)
    {
        lock (Gate)
        {
            var droppedUpTo = -1L;
            foreach (var batch in _batches.Entries.Where(b => b.Bid > keptUpTo).ToArray())
            {
                droppedUpTo = Math.Max(droppedUpTo, batch.Bid);
                foreach (var tid in batch.Tids)
                {
                    if (_pacts.Remove(tid, out var slot))
                    {
                        var reason = reasonFor(batch.Bid, tid);
                        slot.Turn?.TrySetException(reason);
                        foreach (var (_, wait) in slot.KeyWaits ?? [])
                        {
                            wait.TrySetException(reason);
                        }

                        LeaveLanes(tid, slot);
                        _versions?.PactDropped(tid);
                    }
                }

                _batches.Remove(batch.Bid);
            }

            // Batches kept because their commit record is being written completed everywhere; a batch kept because it comes
            // before a global part the master aborted (a cluster) may still be running, and goes on.
            if (droppedUpTo > keptUpTo)
            {
                (_dropped ??= new()).Enqueue((keptUpTo, droppedUpTo));
                if (_dropped.Count > 16)
                {
                    _dropped.Dequeue();
                }
            }

            _started.RemoveAll(batch => batch.Bid > keptUpTo);
            _versions?.DropAfter(keptUpTo, keepWorking: _started.Count > 0);
            WakeLaneHeads();

            // ACTs waiting for a dropped batch now follow the last batch left. ACTs already inside keep the dropped
            // bid: they read its state, and their commit waits for that batch, so they abort too.
            _actPosition = _batches.Count > 0 ? _batches.Entries.Max(b => b.Bid) : _lastCommittedBid;
            foreach (var entry in _acts is null ? [] : _acts.Values.Where(waiting => !waiting.Inside))
            {
                entry.After = Math.Min(entry.After, _actPosition);
            }

            AdmitActs();
        }
    }

    /// <summary>
    /// An ACT asks to work on this actor: it is placed at the tail of the schedule and enters when the rule of
    /// <see cref="HybridScheduling"/> lets it. It gives way (<see cref="AbortReason.HybridDeadlock"/>) if that takes
    /// longer than <paramref name="timeout"/>, at once for a zero timeout.
    /// </summary>
    /// <remarks>
    /// An ACT has one place here until it ends (<see cref="ExitAct"/>) or gives way. Parallel calls of it on this actor each ask (the
    /// second may ask before the first has noted that it got in): they share the place the first took, let in or waiting.
    /// A place of its own for the later call, after batches delivered meanwhile, would replace the first: those batches
    /// would start while the ACT works here, on keys it already took, and their writes would be lost when it installs.
    /// </remarks>
    public async Task EnterActAsync(long tid, TimeSpan timeout)
    {
        ActEntry entry;
        bool letIn;
        lock (Gate)
        {
            _acts ??= new();
            if (_acts.TryGetValue(tid, out var placed))
            {
                entry = placed;
                letIn = placed.Inside;
                if (!letIn && timeout <= TimeSpan.Zero)
                {
                    throw new TransactionAbortedException(tid, AbortReason.HybridDeadlock,
                        $"actor {actor} has uncommitted PACT batches, and an ACT that already holds other actors does not wait for them.");
                }
            }
            else
            {
                entry = new ActEntry(hybrid == HybridScheduling.SerializabilityCheck ? _actPosition : -1);
                letIn = _gateOff || CanEnter(entry);
                if (letIn)
                {
                    entry.Inside = true;
                    _acts[tid] = entry;
                }
                else
                {
                    if (timeout <= TimeSpan.Zero)
                    {
                        throw new TransactionAbortedException(tid, AbortReason.HybridDeadlock,
                            $"actor {actor} has uncommitted PACT batches, and an ACT that already holds other actors does not wait for them.");
                    }

                    entry.Admitted = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                    _acts[tid] = entry;
                }
            }
        }

        hooks?.ActPlaced?.Invoke(actor, tid);
        if (letIn)
        {
            await HeldByTestAsync(tid);
            return;
        }

        var waitingSince = metrics?.ActWaitsForBatches() ?? 0;
        try
        {
            await entry.Admitted!.Task.WaitAsync(timeout);
        }
        catch (TimeoutException)
        {
            var completed = default(Completions); // allocates only when more than one sub-batch completes at once
            lock (Gate)
            {
                // Placed but never let in: batches placed after it may now start. (Only this place: a call sharing it
                // that timed out first removed it already, and a later call may have taken a new one.)
                if (!entry.Inside && _acts!.TryGetValue(tid, out var current) && ReferenceEquals(current, entry))
                {
                    _acts.Remove(tid);
                    Pump(ref completed);
                }
            }

            Report(completed);
            if (!entry.Inside)
            {
                metrics?.ActWaitedForBatches(waitingSince, entered: false);
                throw new TransactionAbortedException(tid, AbortReason.HybridDeadlock,
                    $"the PACT batches scheduled before it on actor {actor} did not {(hybrid == HybridScheduling.SerializabilityCheck ? "complete" : "commit")} within {timeout}.");
            }
        }

        metrics?.ActWaitedForBatches(waitingSince, entered: true);
        await HeldByTestAsync(tid);
    }

    /// <summary>A test may hold an ACT's call here, let in and not yet using the state (<see cref="SnapperTestHooks.ActAdmitted"/>).</summary>
    private Task HeldByTestAsync(long tid) => hooks?.ActAdmitted?.Invoke(actor, tid) ?? Task.CompletedTask;

    /// <summary>
    /// An ACT that entered ended here. <paramref name="maxBefore"/> is its max(BeforeSet) if it committed (none
    /// otherwise): ACTs ordered after it here depend on those batches too (thesis §3.3.4.3).
    /// </summary>
    public void ExitAct(long tid, BatchPosition maxBefore)
    {
        var completed = default(Completions); // allocates only when more than one sub-batch completes at once
        lock (Gate)
        {
            _acts?.Remove(tid);
            _endedActsMaxBefore = BatchPosition.Max(_endedActsMaxBefore, maxBefore);
            Pump(ref completed);
        }

        Report(completed);
    }

    /// <summary>
    /// This actor's part of ACT <paramref name="tid"/>'s BeforeSet. <c>MaxBefore</c>: the batch just before it here if
    /// not committed, and the BeforeSets of ACTs that ended here before (they may precede it), for the check.
    /// <c>ReadFromBid</c>: the batch whose state the ACT reads here if it was not committed yet (-1 otherwise); the ACT
    /// commits only once that batch committed, and aborts if it aborted (thesis §3.3.4.4). Call after the ACT got its lock.
    /// </summary>
    public (BatchPosition MaxBefore, long ReadFromBid) Before(long tid)
    {
        lock (Gate)
        {
            // A resolved batch matters only if it aborted and this ACT read from it (then the ACT must abort too, which
            // ReadFromBid sees). On one silo resolved ones are dropped, so the values kept stay recent and an ACT that
            // depends only on committed batches behaves exactly as one that depends on none; in a cluster they are kept
            // (see IBatchStatus.IsResolved).
            if (!_endedActsMaxBefore.IsNone && batchStatus.IsResolved(_endedActsMaxBefore))
            {
                // Committed (harmless), or aborted, and then the ACTs that depended on it aborted with it.
                _endedActsMaxBefore = BatchPosition.None;
            }

            // An ACT is placed after the last delivered batch, and no later batch commits here before it ends, so
            // its After is either the last committed batch here or one not committed yet (or aborted: gone from the
            // schedule, no position, and the commit rule finds it aborted).
            var readFrom = _acts is not null && _acts.TryGetValue(tid, out var entry) && entry.After != _lastCommittedBid ? entry.After : -1;
            var before = readFrom >= 0 && _batches.TryGetValue(readFrom, out var batch) ? batch.Position : BatchPosition.None;
            return (BatchPosition.Max(before, _endedActsMaxBefore), readFrom);
        }
    }

    /// <summary>
    /// This actor's part of ACT <paramref name="tid"/>'s min(AfterSet): the first batch scheduled after it here,
    /// which cannot start before the ACT ends. None if there is none yet (the AfterSet is incomplete).
    /// </summary>
    public BatchPosition MinAfter(long tid)
    {
        lock (Gate)
        {
            if (_acts is null || !_acts.TryGetValue(tid, out var entry))
            {
                return BatchPosition.None;
            }

            SubBatch? min = null;
            foreach (var batch in _batches.Entries)
            {
                if (batch.Bid > entry.After && (min is null || batch.Bid < min.Bid))
                {
                    min = batch;
                }
            }

            return min?.Position ?? BatchPosition.None;
        }
    }

    private bool CanEnter(ActEntry entry) => hybrid == HybridScheduling.SerializabilityCheck
        ? entry.After <= _lastCompletedBid // rule 1: the batch before it here has completed
        : _batches.Count == 0;             // no batch is uncommitted here

    /// <summary>Whether ACTs placed before <paramref name="batch"/> have not ended yet (rule 2: then it may not start).</summary>
    private bool WaitsForActs(SubBatch batch)
    {
        if (_gateOff || _acts is null)
        {
            return false;
        }

        foreach (var entry in _acts.Values)
        {
            if (hybrid == HybridScheduling.SerializabilityCheck ? entry.After < batch.Bid : entry.Inside)
            {
                return true;
            }
        }

        return false;
    }

    private void AdmitActs()
    {
        if (_acts is null)
        {
            return;
        }

        foreach (var entry in _acts.Values)
        {
            if (!entry.Inside && CanEnter(entry))
            {
                entry.Inside = true;
                entry.Admitted?.TrySetResult();
            }
        }
    }

    private static bool IsTurn(long tid, PactSlot slot) => slot.Batch is { Started: true, Completed: false } batch
        && (batch.Keyed || (batch.Index < batch.Tids.Length && batch.Tids[batch.Index] == tid));

    /// <summary>Moves the schedule forward as far as it can: gives turns, completes and starts sub-batches.</summary>
    private void Pump(ref Completions completed)
    {
        while (true)
        {
            if (_started.Count == 1 && !_started[0].Keyed)
            {
                // An exclusive sub-batch: the PACT with the lowest unfinished tid has the turn.
                var running = _started[0];
                while (running.Index < running.Tids.Length && _pacts[running.Tids[running.Index]].Finished)
                {
                    running.Index++;
                }

                if (running.Index < running.Tids.Length)
                {
                    _pacts[running.Tids[running.Index]].Turn?.TrySetResult();
                    return;
                }
            }

            // Sub-batches whose PACTs all finished here complete in start order: BatchComplete (the vote) goes to the coordinator.
            var progressed = false;
            while (_started.Count > 0 && AllFinished(_started[0]))
            {
                var done = _started[0];
                _started.RemoveAt(0);
                _lastCompletedBid = done.Bid;
                done.Completed = true;
                completed.Add(new CompletedSubBatch(done.Bid, _versions?.BatchCompleted(done.Bid) ?? default));
                AdmitActs();
                progressed = true;
            }

            if (!TryStartNext() && !progressed)
            {
                return;
            }
        }
    }

    private static bool AllFinished(SubBatch batch) => batch.Keyed ? batch.Unfinished == 0 : batch.Index >= batch.Tids.Length;

    private bool TryStartNext()
    {
        if (_started.Count > 0 && !_started[^1].Keyed)
        {
            return false; // an exclusive sub-batch runs alone
        }

        var resolved = batchStatus.ResolvedBid;
        var lastStarted = _started.Count > 0 ? _started[^1].Bid : long.MinValue;
        SubBatch? next = null;
        foreach (var batch in _batches.Entries)
        {
            if (!batch.Started
                && (batch.PrevBid == _lastCompletedBid || batch.PrevBid == lastStarted || batch.PrevBid <= resolved || PrevDroppedHere(batch))
                && (next is null || batch.Bid < next.Bid))
            {
                next = batch;
            }
        }

        if (next is null)
        {
            return false;
        }

        var keyed = _versions is { PipelinesKeys: true } && next.Tids.All(tid => _pacts[tid].Keys is not null);
        if (!keyed && _started.Count > 0)
        {
            return false; // an exclusive one waits for every earlier one
        }

        if (WaitsForActs(next))
        {
            // Any waits for the ACTs placed before it here; how long is measured from the first time only they held it.
            next.HeldByActsSince = next.HeldByActsSince == 0 ? System.Diagnostics.Stopwatch.GetTimestamp() : next.HeldByActsSince;
            return false;
        }

        if (next.HeldByActsSince != 0)
        {
            metrics?.BatchWaitedForActs(next.HeldByActsSince);
        }

        next.Started = true;
        next.Keyed = keyed;
        _started.Add(next);
        if (keyed)
        {
            foreach (var tid in next.Tids)
            {
                var slot = _pacts[tid];
                if (!slot.Finished)
                {
                    foreach (var key in slot.Keys!)
                    {
                        _lanes ??= new();
                        if (!_lanes.TryGetValue(key, out var lane))
                        {
                            _lanes[key] = lane = new LinkedList<long>();
                        }

                        lane.AddLast(tid);
                    }

                    slot.InLanes = true;
                }

                slot.Turn?.TrySetResult();
            }
        }

        return true;
    }

    /// <summary>
    /// Whether <paramref name="batch"/>'s prev_bid was dropped here by a cascading abort (the token still names aborted
    /// batches) and every earlier batch here has completed, so nothing before it is left to run. Needed in a cluster,
    /// where batches kept by an abort may still be unresolved, so <see cref="IBatchStatus.ResolvedBid"/> stays below the
    /// dropped ones for a while.
    /// </summary>
    private bool PrevDroppedHere(SubBatch batch)
    {
        if (batch.PrevBid < 0 || _dropped is null || !_dropped.Any(range => batch.PrevBid > range.After && batch.PrevBid <= range.UpTo))
        {
            return false;
        }

        foreach (var other in _batches.Entries)
        {
            if (other.Bid < batch.Bid && !other.Completed)
            {
                return false;
            }
        }

        return true;
    }

    private void Report(in Completions completed)
    {
        if (completed.Count == 0)
        {
            return;
        }

        completions.SubBatchCompleted(completed.First.Bid, actor, completed.First.Version);
        if (completed.More is { } more)
        {
            foreach (var done in more)
            {
                completions.SubBatchCompleted(done.Bid, actor, done.Version);
            }
        }
    }

    /// <summary>
    /// The sub-batches one step of the schedule completed, reported after its lock is released: usually none or one, held
    /// inline; a list only when several complete at once.
    /// </summary>
    private struct Completions
    {
        public int Count;
        public CompletedSubBatch First;
        public List<CompletedSubBatch>? More;

        public void Add(CompletedSubBatch done)
        {
            if (Count++ == 0)
            {
                First = done;
            }
            else
            {
                (More ??= []).Add(done);
            }
        }
    }

    /// <summary>A sub-batch that completed here: its bid, and the version it left in log form.</summary>
    private readonly record struct CompletedSubBatch(long Bid, CompletedVersion Version);

    private sealed class SubBatch(long bid, long prevBid, long[] tids, BatchPosition position)
    {
        public long Bid { get; } = bid;

        public BatchPosition Position { get; } = position;

        public long PrevBid { get; } = prevBid;

        public long[] Tids { get; } = tids;

        public int Index { get; set; }

        public bool Started { get; set; }

        /// <summary>When it was first free to start but for ACTs placed before it (<see cref="System.Diagnostics.Stopwatch"/> ticks; 0: never).</summary>
        public long HeldByActsSince { get; set; }

        /// <summary>Its PACTs that have not finished here.</summary>
        public int Unfinished { get; set; } = tids.Length;

        /// <summary>Started keyed: its PACTs queue per key instead of running one at a time.</summary>
        public bool Keyed { get; set; }

        public bool Completed { get; set; }
    }

    private sealed class PactSlot(SubBatch batch, int declared, IReadOnlySet<object>? keys)
    {
        public SubBatch Batch { get; } = batch;

        public long Bid => Batch.Bid;

        public int Declared { get; } = declared;

        /// <summary>The keys the PACT declared here; null: the actor whole.</summary>
        public IReadOnlySet<object>? Keys { get; } = keys;

        /// <summary>Queued in <see cref="_lanes"/> for its keys (its batch started keyed, and it has not finished).</summary>
        public bool InLanes { get; set; }

        /// <summary>Uses of keys waiting to reach the head of their queues: the keys, and what completes when they did.</summary>
        public List<(IReadOnlyCollection<object> Keys, TaskCompletionSource<bool> Done)>? KeyWaits { get; set; }

        public int Entered { get; set; }

        public int Running { get; set; }

        public bool Finished { get; set; }

        /// <summary>Calls made from this actor by the PACT's methods that have not returned yet.</summary>
        public int OutstandingCalls { get; set; }

        public TaskCompletionSource? Turn { get; set; }
    }

    /// <summary>An ACT placed in this schedule: after batch <see cref="After"/>, waiting to enter or inside.</summary>
    private sealed class ActEntry(long after)
    {
        /// <summary>The bid of the batch just before the ACT here (-1: none). Batches with larger bids wait for it.</summary>
        public long After { get; set; } = after;

        public bool Inside { get; set; }

        public TaskCompletionSource? Admitted { get; set; }
    }
}
