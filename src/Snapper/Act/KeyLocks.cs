namespace Snapper.Act;

/// <summary>
/// The ACT locks of a key-level actor's keys: a <see cref="WaitDieLock"/> per key, made when an ACT first asks for
/// the key and dropped once nobody holds or waits for it, so an actor of many keys keeps locks only for the keys in use.
/// </summary>
/// <remarks>Touched only from turns of the activation that owns the actor, like the actor's own lock.</remarks>
internal sealed class KeyLocks
{
    // Made at the first key an ACT asks for: most actors never lock a key, and a silo keeps every actor's locks.
    private Dictionary<object, WaitDieLock>? _locks;

    /// <summary>Locks alive now: those someone holds or waits for.</summary>
    public int Count => _locks?.Count ?? 0;

    /// <summary>The lock of <paramref name="key"/> (made now if nobody holds or waits for it).</summary>
    public WaitDieLock Of(object key)
    {
        _locks ??= new();
        if (!_locks.TryGetValue(key, out var keyLock))
        {
            _locks[key] = keyLock = new WaitDieLock();
        }

        return keyLock;
    }

    /// <summary>
    /// Releases <paramref name="tid"/>'s hold or request on each of <paramref name="keys"/> (see
    /// <see cref="WaitDieLock.Release"/>), dropping the locks nobody else holds or waits for.
    /// </summary>
    public void Release(long tid, TransactionAbortedException? pendingFailure, IEnumerable<object> keys)
    {
        if (_locks is null)
        {
            return;
        }

        foreach (var key in keys)
        {
            if (_locks.TryGetValue(key, out var keyLock))
            {
                keyLock.Release(tid, pendingFailure);
                if (keyLock.HolderCount == 0 && keyLock.WaiterCount == 0)
                {
                    _locks.Remove(key);
                }
            }
        }
    }

    /// <summary>See <see cref="WaitDieLock.HolderWaitsForBatches"/>, for each of <paramref name="keys"/> that has a lock.</summary>
    public void HolderWaitsForBatches(long tid, IEnumerable<object> keys)
    {
        if (_locks is null)
        {
            return;
        }

        foreach (var key in keys)
        {
            if (_locks.TryGetValue(key, out var keyLock))
            {
                keyLock.HolderWaitsForBatches(tid);
            }
        }
    }
}
