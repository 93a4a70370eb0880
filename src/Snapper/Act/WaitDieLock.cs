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
/// <item>Each wait has a bound; at the bound the waiter leaves the queue and its transaction aborts.</item>
/// </list>
/// Not thread-safe: an actor uses it only from its own turn-based scheduler.
/// </remarks>
internal sealed class WaitDieLock
{
    private readonly Dictionary<long, AccessMode> _holders = new();
    private readonly LinkedList<Waiter> _queue = new();

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

        if (MustDie(tid, mode, out var blocker))
        {
            return Task.FromException(new TransactionAbortedException(
                tid, AbortReason.WaitDie, $"it is younger than transaction {blocker}, which holds or awaits the lock."));
        }

        var entry = new Waiter(tid, mode);
        _queue.AddLast(entry);
        return WaitAsync(entry, timeout);
    }

    /// <summary>Releases every lock and pending request of <paramref name="tid"/> and grants what can now run.</summary>
    public void Release(long tid, TransactionAbortedException? pendingFailure = null)
    {
        _holders.Remove(tid);
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
        await earlier;
        await AcquireAsync(tid, mode, timeout);
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
            GrantWaiters();
            throw new TransactionAbortedException(entry.Tid, AbortReason.LockTimeout, $"it waited longer than {timeout} for a lock.");
        }
        catch (TimeoutException) when (entry.Completion.Task.IsCompletedSuccessfully)
        {
            // Granted between the timer firing and this continuation running: the lock is ours.
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
