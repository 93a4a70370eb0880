using System.Diagnostics;

namespace Snapper.Act;

/// <summary>
/// The read/write lock of one actor for ACTs (strict 2PL, thesis §3.3.3.2) with wait-die deadlock
/// prevention: a transaction may only wait for transactions younger than itself (larger tids); a younger
/// one that would wait for an older one dies instead.
/// </summary>
/// <remarks>
/// Invariants this class keeps:
/// <list type="bullet">
/// <item>Every wait edge goes from an older to a younger transaction. A requester waits only if it is older
/// than every conflicting holder and every queued waiter (it queues behind all of them); so no cycle of
/// waits can form, within one actor or across actors.</item>
/// <item>Waiters are granted strictly in queue order, as long as the head is compatible with the holders.</item>
/// <item>Each wait has a bound; at the bound the waiter leaves the queue and its transaction aborts. A request of the
/// same transaction that waits behind it (a parallel call on this actor) fails with it, so no request waits longer than
/// its own bound, counted from when it was made.</item>
/// <item>Nobody waits for a holder that waits for PACT batches (<see cref="HolderWaitsForBatches"/>): such a
/// batch may itself wait for the requester on another actor (thesis §3.3.4.2), a cycle wait-die cannot see.
/// Requesters then abort with <see cref="AbortReason.HybridDeadlock"/>, queued ones at once.</item>
/// </list>
/// Not thread-safe: an actor uses it only from its own turn-based scheduler.
/// </remarks>
internal sealed class WaitDieLock
{
    private readonly Dictionary<long, AccessMode> _holders = new();
    private readonly LinkedList<Waiter> _queue = new();
    private readonly HashSet<long> _waitingForBatches = new();

    /// <summary>True if <paramref name="tid"/> holds the lock in <paramref name="mode"/> or stronger.</summary>
    public bool Holds(long tid, AccessMode mode) =>
        _holders.TryGetValue(tid, out var held) && (held == AccessMode.ReadWrite || mode == AccessMode.Read);

    /// <summary>Number of transactions holding the lock.</summary>
    public int HolderCount => _holders.Count;

    /// <summary>Number of transactions waiting for the lock.</summary>
    public int WaiterCount => _queue.Count;

    /// <summary>
    /// Acquires the lock for <paramref name="tid"/>. Completes at once when granted; fails with
    /// <see cref="TransactionAbortedException"/> (<see cref="AbortReason.WaitDie"/>) when the requester must
    /// die, or (<see cref="AbortReason.LockTimeout"/>) when the wait exceeds <paramref name="timeout"/>.
    /// </summary>
    public Task AcquireAsync(long tid, AccessMode mode, TimeSpan timeout)
    {
        if (Holds(tid, mode))
        {
            return Task.CompletedTask;
        }

        foreach (var waiter in _queue)
        {
            if (waiter.Tid == tid)
            {
                // Parallel calls of one transaction on this actor: wait for the earlier request, then retry.
                return AfterEarlierRequestAsync(waiter.Completion.Task, tid, mode, timeout);
            }
        }

        if (_queue.Count == 0 && IsCompatible(tid, mode))
        {
            Grant(tid, mode);
            return Task.CompletedTask;
        }

        if (ConflictsWithBatchWaiter(tid, mode, out var waiting))
        {
            return Task.FromException(new TransactionAbortedException(
                tid, AbortReason.HybridDeadlock, $"transaction {waiting}, which holds the lock, waits for PACT batches to commit."));
        }

        if (MustDie(tid, mode, out var blocker))
        {
            return Task.FromException(new TransactionAbortedException(
                tid, AbortReason.WaitDie, $"it is younger than transaction {blocker}, which holds or awaits the lock."));
        }

        var entry = new Waiter(tid, mode);
        _queue.AddLast(entry);
        return WaitAsync(entry, timeout);
    }

    /// <summary>
    /// Holder <paramref name="tid"/> is about to wait for PACT batches to commit (hybrid commit rule, thesis
    /// §3.3.4.4): every queued request aborts, and so does every conflicting request until it releases.
    /// </summary>
    public void HolderWaitsForBatches(long tid)
    {
        if (!_holders.ContainsKey(tid) || !_waitingForBatches.Add(tid))
        {
            return;
        }

        // Every waiter waits, directly or behind the queue's head, for the holders, and so for this one.
        var waiters = _queue.ToArray();
        _queue.Clear();
        foreach (var waiter in waiters)
        {
            waiter.Completion.TrySetException(new TransactionAbortedException(
                waiter.Tid, AbortReason.HybridDeadlock, $"transaction {tid}, which holds the lock, waits for PACT batches to commit."));
        }
    }

    /// <summary>Releases every lock and pending request of <paramref name="tid"/> and grants what can now run.</summary>
    public void Release(long tid, TransactionAbortedException? pendingFailure = null)
    {
        _holders.Remove(tid);
        _waitingForBatches.Remove(tid);
        for (var node = _queue.First; node is not null;)
        {
            var next = node.Next;
            if (node.Value.Tid == tid)
            {
                _queue.Remove(node);
                node.Value.Completion.TrySetException(pendingFailure
                    ?? new TransactionAbortedException(tid, AbortReason.InvalidCall, "the transaction ended while it waited for a lock."));
            }

            node = next;
        }

        GrantWaiters();
    }

    private async Task AfterEarlierRequestAsync(Task earlier, long tid, AccessMode mode, TimeSpan timeout)
    {
        // The earlier request ends by its own bound (granted, failed, or timed out: WaitAsync fails its completion then),
        // and this one's bound counts from now, not from when the earlier one ended.
        var started = Stopwatch.GetTimestamp();
        await earlier;
        if (!_holders.ContainsKey(tid))
        {
            // Granted, and released since (the transaction ended before this continuation ran): asking again would
            // grant a lock nobody releases.
            throw new TransactionAbortedException(tid, AbortReason.InvalidCall, "the transaction ended while it waited for a lock.");
        }

        var left = timeout - Stopwatch.GetElapsedTime(started);
        await AcquireAsync(tid, mode, left > TimeSpan.Zero ? left : TimeSpan.Zero);
    }

    private async Task WaitAsync(Waiter entry, TimeSpan timeout)
    {
        try
        {
            await entry.Completion.Task.WaitAsync(timeout);
        }
        catch (TimeoutException) when (!entry.Completion.Task.IsCompleted)
        {
            _queue.Remove(entry);
            var abort = new TransactionAbortedException(entry.Tid, AbortReason.LockTimeout, $"it waited longer than {timeout} for a lock.");

            // Requests of the same transaction waiting for this one (AfterEarlierRequestAsync) would otherwise wait forever:
            // nothing completes a request that left the queue. They fail with it; observed here, as none may be waiting.
            entry.Completion.TrySetException(abort);
            _ = entry.Completion.Task.Exception;
            GrantWaiters();
            throw abort;
        }
        catch (TimeoutException) when (entry.Completion.Task.IsCompletedSuccessfully)
        {
            // Granted between the timer firing and this continuation running: the lock is ours.
        }
        catch (TimeoutException) when (entry.Completion.Task.IsFaulted)
        {
            // Failed (released, or its holder waits for batches) between the timer firing and this continuation running:
            // that failure, typed, rather than the timer's.
            await entry.Completion.Task;
        }
    }

    private bool IsCompatible(long tid, AccessMode mode)
    {
        foreach (var (holder, held) in _holders)
        {
            if (holder != tid && (mode == AccessMode.ReadWrite || held == AccessMode.ReadWrite))
            {
                return false;
            }
        }

        return true;
    }

    private bool ConflictsWithBatchWaiter(long tid, AccessMode mode, out long waiting)
    {
        foreach (var holder in _waitingForBatches)
        {
            if (holder != tid && (mode == AccessMode.ReadWrite || _holders[holder] == AccessMode.ReadWrite))
            {
                waiting = holder;
                return true;
            }
        }

        waiting = 0;
        return false;
    }

    private bool MustDie(long tid, AccessMode mode, out long blocker)
    {
        foreach (var (holder, held) in _holders)
        {
            if (holder != tid && (mode == AccessMode.ReadWrite || held == AccessMode.ReadWrite) && tid > holder)
            {
                blocker = holder;
                return true;
            }
        }

        foreach (var waiter in _queue)
        {
            if (tid > waiter.Tid)
            {
                blocker = waiter.Tid;
                return true;
            }
        }

        blocker = 0;
        return false;
    }

    private void Grant(long tid, AccessMode mode)
    {
        _holders[tid] = _holders.TryGetValue(tid, out var held) && held == AccessMode.ReadWrite ? held : mode;
    }

    private void GrantWaiters()
    {
        while (_queue.First is { } head && IsCompatible(head.Value.Tid, head.Value.Mode))
        {
            _queue.RemoveFirst();
            Grant(head.Value.Tid, head.Value.Mode);
            head.Value.Completion.TrySetResult();
        }
    }

    private sealed class Waiter(long tid, AccessMode mode)
    {
        public long Tid { get; } = tid;

        public AccessMode Mode { get; } = mode;

        // Continuations run asynchronously so that granting never runs a waiter's code inside Release.
        public TaskCompletionSource Completion { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);
    }
}
