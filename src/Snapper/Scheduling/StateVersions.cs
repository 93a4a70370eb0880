namespace Snapper.Scheduling;

/// <summary>
/// The committed state of an actor and the speculative versions PACT batches left on it (thesis §3.3.2.3: a batch
/// runs on the state of the previous batch once that batch completed here, before it committed).
/// </summary>
/// <remarks>
/// Invariants, all under the schedule's lock:
/// <list type="bullet">
/// <item><c>Committed</c> and every recorded version are never handed to running code: the first access of a batch
/// copies <c>Latest</c> if it is shared with either, so a later abort can fall back to them intact.</item>
/// <item><c>Latest</c> is the state after the last batch that completed here (or the committed state).</item>
/// <item>An ACT copies <c>Latest</c>: it runs only after the batches before it completed here and before any batch
/// after it starts, so no batch is changing <c>Latest</c> meanwhile. It commits only after those batches committed,
/// so when it installs its copy, <c>Committed</c> equals <c>Latest</c> and no version is left.</item>
/// </list>
/// </remarks>
internal sealed class StateVersions<TState>(object gate, TState initial, Func<TState, TState> copy, long lastSeq = 0) : IActorStateVersions
    where TState : class
{
    private readonly Dictionary<long, TState> _versions = new();
    private TState _committed = initial;
    private TState _latest = initial;
    private bool _latestShared = true;
    private long _seq = lastSeq;

    public TState Committed
    {
        get
        {
            lock (gate)
            {
                return _committed;
            }
        }
    }

    /// <summary>
    /// The state a PACT of the running batch works on. A write access gets the batch's own copy, the same object for
    /// every write access of that batch; a read access gets the state as it stands, shared and not copied (so a batch
    /// that only reads leaves no version behind, and nothing to log).
    /// </summary>
    public TState ForPact(AccessMode mode)
    {
        lock (gate)
        {
            if (mode == AccessMode.Read)
            {
                return _latest;
            }

            if (_latestShared)
            {
                _latest = copy(_latest);
                _latestShared = false;
            }

            return _latest;
        }
    }

    /// <summary>A private copy of the state an ACT starts from: the state after the batches before it.</summary>
    public TState ForAct()
    {
        lock (gate)
        {
            // Shared means no batch is writing it (always so under the hybrid rules; the test-only switch that
            // removes them may let a batch run meanwhile, and then the committed state is the safe choice).
            return copy(_latestShared ? _latest : _committed);
        }
    }

    /// <summary>
    /// The state an ACT reads without writing: the state after the batches before it, shared, not copied. It holds a
    /// read lock, so no ACT installs over it meanwhile, and no batch after it starts here before it ends.
    /// </summary>
    public TState ForActRead()
    {
        lock (gate)
        {
            return _latestShared ? _latest : _committed;
        }
    }

    /// <summary>The last seq this actor handed out for a log record.</summary>
    public long LastSeq
    {
        get
        {
            lock (gate)
            {
                return _seq;
            }
        }
    }

    /// <summary>Installs what a committed ACT wrote.</summary>
    public void InstallAct(TState written)
    {
        lock (gate)
        {
            _committed = _latest = written;
            _latestShared = true;
        }
    }

    /// <summary>
    /// The next number in this actor's version order, for a log record. Versions are created in commit order
    /// (batches in bid order; a writing ACT between the batches before and after it), so recovery takes the
    /// committed record with the largest one. Continues above what recovery found.
    /// </summary>
    public long NextSeq()
    {
        lock (gate)
        {
            return ++_seq;
        }
    }

    public (object? Version, long Seq) BatchCompleted(long bid)
    {
        if (_latestShared)
        {
            return (null, 0);
        }

        _versions[bid] = _latest;
        _latestShared = true;
        return (_latest, ++_seq);
    }

    public void BatchCommitted(long bid)
    {
        if (_versions.Remove(bid, out var version))
        {
            _committed = version;
        }
    }

    public void DropAfter(long keptUpTo, bool keepWorking = false)
    {
        foreach (var bid in _versions.Keys.Where(bid => bid > keptUpTo).ToArray())
        {
            _versions.Remove(bid);
        }

        if (keepWorking)
        {
            return;
        }

        _latest = _versions.Count > 0 ? _versions[_versions.Keys.Max()] : _committed;
        _latestShared = true;
    }
}
