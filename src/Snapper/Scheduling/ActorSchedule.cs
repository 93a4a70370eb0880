using Snapper.Pact;

namespace Snapper.Scheduling;

/// <summary>
/// One actor's local schedule (thesis §3.3.2.3, §3.3.4.1): the PACT sub-batches delivered to it, chained by
/// prev_bid, the PACTs of the running sub-batch in tid order, and the gate between batches and ACTs.
/// </summary>
/// <remarks>
/// Invariants (all state under <see cref="Gate"/>):
/// <list type="bullet">
/// <item>At most one sub-batch runs. A sub-batch starts only when the sub-batch named by its prev_bid has
/// completed here, or that batch is already resolved (committed or aborted) everywhere.</item>
/// <item>Inside a sub-batch only the PACT with the lowest unfinished tid runs; it finishes when it has made its
/// declared number of accesses, or when its first actor's method returned (declared accesses it never made
/// are released then, so later batches never wait for them).</item>
/// <item>Hybrid (conservative form of §3.3.4.1): an ACT enters only when no batch is uncommitted here, and a
/// batch starts only when no ACT is inside. So every conflict edge X → Y between transactions on this actor
/// means Y committed after X, and commit order is a serialization order across all actors.</item>
/// <item>Nothing here calls the <see cref="PactService"/> while holding the lock: the service calls in with
/// its own lock held, and the opposite order would deadlock. Completed batches are reported after release.</item>
/// </list>
/// </remarks>
internal sealed class ActorSchedule(GrainId actor, PactService service, bool unsafeSkipHybridGate = false)
{
    private readonly Dictionary<long, SubBatch> _batches = new();
    private readonly Dictionary<long, PactSlot> _pacts = new();
    private readonly List<ActWaiter> _actWaiters = new();
    private SubBatch? _running;
    private long _lastCompletedBid = -1;
    private int _actsInside;
    private IActorStateVersions? _versions;

    /// <summary>The lock of this schedule and of the actor's state versions.</summary>
    public object Gate { get; } = new();

    public GrainId Actor => actor;

    /// <summary>Connects the activated actor's state, so batches can record, commit and drop versions.</summary>
    public void Attach(IActorStateVersions versions)
    {
        lock (Gate)
        {
            _versions = versions;
        }
    }

    /// <summary>A sub-batch arrives from the coordinator that emitted it.</summary>
    public void Deliver(long bid, long prevBid, IReadOnlyList<(long Tid, int Accesses)> pacts)
    {
        var completed = new List<long>();
        lock (Gate)
        {
            var tids = new long[pacts.Count];
            for (var i = 0; i < pacts.Count; i++)
            {
                tids[i] = pacts[i].Tid;
                _pacts[pacts[i].Tid] = new PactSlot(bid, pacts[i].Accesses);
            }

            Array.Sort(tids);
            _batches[bid] = new SubBatch(bid, prevBid, tids);
            Pump(completed);
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

    /// <summary>Whether PACT <paramref name="tid"/> is running a method here now (it may use the state).</summary>
    public bool IsRunning(long tid)
    {
        lock (Gate)
        {
            return _pacts.TryGetValue(tid, out var slot) && slot.Running > 0 && IsTurn(tid, slot);
        }
    }

    /// <summary>A method of PACT <paramref name="tid"/> returned here.</summary>
    public void Exit(long tid)
    {
        var completed = new List<long>();
        lock (Gate)
        {
            if (!_pacts.TryGetValue(tid, out var slot))
            {
                return; // aborted meanwhile
            }

            slot.Running--;
            if (slot.Running == 0 && slot.Entered >= slot.Declared)
            {
                slot.Finished = true;
                Pump(completed);
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
        var completed = new List<long>();
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
                slot.Finished = true;
                Pump(completed);
            }
        }

        Report(completed);
        return clean;
    }

    /// <summary>The coordinator committed batch <paramref name="bid"/> (after every earlier batch).</summary>
    public void Commit(long bid)
    {
        var completed = new List<long>();
        lock (Gate)
        {
            if (_batches.Remove(bid, out var batch))
            {
                foreach (var tid in batch.Tids)
                {
                    _pacts.Remove(tid);
                }

                _versions?.BatchCommitted(bid);
            }

            AdmitActs();
            Pump(completed);
        }

        Report(completed);
    }

    /// <summary>Cascading abort: every uncommitted batch here is dropped, with the state it produced.</summary>
    public void AbortAll(Func<long, long, TransactionAbortedException> reasonFor)
    {
        lock (Gate)
        {
            foreach (var batch in _batches.Values)
            {
                foreach (var tid in batch.Tids)
                {
                    if (_pacts.TryGetValue(tid, out var slot))
                    {
                        slot.Turn?.TrySetException(reasonFor(batch.Bid, tid));
                    }
                }
            }

            _batches.Clear();
            _pacts.Clear();
            _running = null;
            _versions?.Reset();
            AdmitActs();
        }
    }

    /// <summary>
    /// An ACT asks to work on this actor. It enters when no batch is uncommitted here; it gives way
    /// (<see cref="AbortReason.HybridDeadlock"/>) if that takes longer than <paramref name="timeout"/>, at once
    /// for a zero timeout.
    /// </summary>
    public async Task EnterActAsync(long tid, TimeSpan timeout)
    {
        ActWaiter waiter;
        lock (Gate)
        {
            if (_batches.Count == 0 || unsafeSkipHybridGate)
            {
                _actsInside++;
                return;
            }

            if (timeout <= TimeSpan.Zero)
            {
                throw new TransactionAbortedException(tid, AbortReason.HybridDeadlock,
                    $"actor {actor} has uncommitted PACT batches, and an ACT that already holds other actors does not wait for them.");
            }

            waiter = new ActWaiter();
            _actWaiters.Add(waiter);
        }

        try
        {
            await waiter.Admitted.Task.WaitAsync(timeout);
        }
        catch (TimeoutException)
        {
            lock (Gate)
            {
                if (!waiter.Admitted.Task.IsCompleted)
                {
                    _actWaiters.Remove(waiter);
                    throw new TransactionAbortedException(tid, AbortReason.HybridDeadlock,
                        $"PACT batches scheduled on actor {actor} did not commit within {timeout}.");
                }
            }
        }
    }

    /// <summary>An ACT that entered ended here (committed or aborted).</summary>
    public void ExitAct()
    {
        var completed = new List<long>();
        lock (Gate)
        {
            _actsInside--;
            Pump(completed);
        }

        Report(completed);
    }

    private void AdmitActs()
    {
        if (_batches.Count > 0)
        {
            return;
        }

        foreach (var waiter in _actWaiters)
        {
            _actsInside++;
            waiter.Admitted.TrySetResult();
        }

        _actWaiters.Clear();
    }

    private bool IsTurn(long tid, PactSlot slot) =>
        _running is { } running && running.Bid == slot.Bid && running.Index < running.Tids.Length && running.Tids[running.Index] == tid;

    /// <summary>Moves the schedule forward as far as it can: finishes PACTs, completes and starts sub-batches.</summary>
    private void Pump(List<long> completed)
    {
        while (true)
        {
            if (_running is null && !TryStartNext())
            {
                return;
            }

            var running = _running!;
            while (running.Index < running.Tids.Length && _pacts[running.Tids[running.Index]].Finished)
            {
                running.Index++;
            }

            if (running.Index < running.Tids.Length)
            {
                _pacts[running.Tids[running.Index]].Turn?.TrySetResult();
                return;
            }

            // Every PACT of the sub-batch is done here: BatchComplete (the vote) goes to the coordinator.
            _lastCompletedBid = running.Bid;
            running.Completed = true;
            _versions?.BatchCompleted(running.Bid);
            completed.Add(running.Bid);
            _running = null;
        }
    }

    private bool TryStartNext()
    {
        if (_actsInside > 0 && !unsafeSkipHybridGate)
        {
            return false; // a batch starts only after the ACTs before it ended here
        }

        var resolved = service.ResolvedBid;
        SubBatch? next = null;
        foreach (var batch in _batches.Values)
        {
            if (!batch.Completed && (batch.PrevBid == _lastCompletedBid || batch.PrevBid <= resolved) && (next is null || batch.Bid < next.Bid))
            {
                next = batch;
            }
        }

        _running = next;
        return next is not null;
    }

    private void Report(List<long> completed)
    {
        foreach (var bid in completed)
        {
            service.BatchComplete(bid, actor);
        }
    }

    private sealed class SubBatch(long bid, long prevBid, long[] tids)
    {
        public long Bid { get; } = bid;

        public long PrevBid { get; } = prevBid;

        public long[] Tids { get; } = tids;

        public int Index { get; set; }

        public bool Completed { get; set; }
    }

    private sealed class PactSlot(long bid, int declared)
    {
        public long Bid { get; } = bid;

        public int Declared { get; } = declared;

        public int Entered { get; set; }

        public int Running { get; set; }

        public bool Finished { get; set; }

        public TaskCompletionSource? Turn { get; set; }
    }

    private sealed class ActWaiter
    {
        public TaskCompletionSource Admitted { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);
    }
}
