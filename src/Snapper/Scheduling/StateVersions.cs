namespace Snapper.Scheduling;

/// <summary>
/// The committed state of an actor and the speculative versions PACT batches left on it (thesis §3.3.2.3: a batch
/// runs on the state of the previous batch once that batch completed here, before it committed).
/// </summary>
/// <remarks>
/// Invariants, all under the schedule's lock:
/// <list type="bullet">
/// <item><c>Committed</c> and every recorded version are never handed to running code: the first write access of a
/// batch copies <c>Latest</c> if it is shared with either, so a later abort can fall back to them intact. The copy takes
/// the place of <c>Latest</c> in <c>Committed</c> and the versions, and the batch changes the object it copied in place
/// (for a state logged whole; a state logged by its changes, <see cref="Logging.IIncrementallyLogged"/>, and every
/// state at key level give the batch the new version, which records the changes). So the state object of an actor
/// that batches keep writing stays the same, long-lived one: giving each batch a new object made every write commit a
/// young object that an old actor refers to, which each garbage collection had to find through the old generation's
/// cards and promote (with 50,000 actors, two thirds of every gen0 pause). The copy a batch leaves behind dies young
/// once the batch commits.</item>
/// <item>Nothing keeps the object past the point where a later batch may change it: the batches run on it one after
/// the other, an ACT that reads it shared holds its read lock and no batch after it starts here before it ends, and a
/// completed version goes to the log in log form (<c>logForm</c>, null when the silo does not log), taken under the
/// lock when its batch completes (<see cref="CompletedVersion"/>), not later on the way to the logger.</item>
/// <item><c>Latest</c> is the state after the last batch that completed here (or the committed state).</item>
/// <item>An ACT copies <c>Latest</c>: it runs only after the batches before it completed here and before any batch
/// after it starts, so no batch is changing <c>Latest</c> meanwhile. It commits only after those batches' commit
/// records are queued ahead of its own, so when it installs its copy the versions left are theirs (at most up to the
/// batch it read from), which its install folds into <c>Committed</c> (<see cref="InstallAct"/>).</item>
/// <item>Key level (<paramref name="keyLevel"/>, a state of keys, <see cref="IKeyedVersion"/>): PACTs of keyed batches
/// run side by side, each on its own version (<see cref="ForKeyedPact"/>), holding its keys alone (the schedule's key
/// queues). A PACT takes each key from <c>Latest</c> when it acquires it, and when it finishes its changes are applied to
/// a new <c>Latest</c> and to its batch's version. So a batch's version holds exactly what its PACTs changed, as they
/// left it, and the committed state advances by applying versions' changes in bid order, whatever order the keys were
/// used in. Versions are replaced, never changed once shared; <c>Latest</c> stays shared in keyed mode.</item>
/// </list>
/// </remarks>
internal sealed class StateVersions<TState>(object gate, TState initial, Func<TState, TState> copy, long lastSeq = 0, bool keyLevel = false,
    Func<TState, Logging.LoggedState>? logForm = null, string? logName = null) : IActorStateVersions
    where TState : class
{
    private readonly Dictionary<long, TState> _versions = new();
    private Dictionary<long, PactVersion>? _pactVersions; // made at the first keyed PACT: most actors never have one
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
                if (keyLevel || _latest is Logging.IIncrementallyLogged)
                {
                    _latest = copy(_latest); // a new version: it records the changes its log record carries
                }
                else
                {
                    KeepCopyOfLatest();
                }

                _latestShared = false;
            }

            return _latest;
        }
    }

    /// <summary>
    /// The version PACT <paramref name="tid"/> of a keyed batch works on here: its own, made at its first use, with
    /// <paramref name="keys"/> taken from the latest state the first time it names them (the PACTs before it in their
    /// queues have finished with them, and none after it may use them until it finishes).
    /// </summary>
    public TState ForKeyedPact(long tid, IReadOnlyCollection<object> keys)
    {
        lock (gate)
        {
            _pactVersions ??= new();
            if (!_pactVersions.TryGetValue(tid, out var held))
            {
                _pactVersions[tid] = held = new PactVersion((TState)Keyed(_latest).NewVersion());
                held.Keys.UnionWith(keys);
                return held.Version;
            }

            var fresh = keys.Where(held.Keys.Add).ToList();
            if (fresh.Count > 0)
            {
                Keyed(held.Version).TakeKeys(_latest, fresh);
            }

            return held.Version;
        }
    }

    public bool PipelinesKeys => keyLevel && _latestShared && _latest is IKeyedVersion { BaseInLog: true };

    public void PactFinished(long tid, long bid)
    {
        if (_pactVersions is null || !_pactVersions.Remove(tid, out var held) || !Keyed(held.Version).HasChanges)
        {
            return;
        }

        if (!_versions.TryGetValue(bid, out var version))
        {
            // Only its changed keys count: its other keys may grow older than the latest state's.
            _versions[bid] = version = (TState)Keyed(_latest).NewVersion();
        }

        Keyed(held.Version).ApplyChangesTo(version);
        _latest = Applied(_latest, held.Version);
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

    /// <summary>
    /// Installs what a committed ACT wrote. <paramref name="readFrom"/>: the batch it read from here if that had not
    /// committed when it did (-1 if none).
    /// </summary>
    /// <remarks>
    /// An ACT may commit once the batches it read from have their commit records queued, before they are applied here
    /// (PactService.WhenCommitsOrderedAsync): their versions, up to <paramref name="readFrom"/>, are then still kept. They
    /// come before the ACT in the commit order and are in what it wrote, so they are folded into the committed state
    /// first and dropped: their commit, when it is applied, finds no version and leaves the ACT's state standing.
    /// </remarks>
    public void InstallAct(TState written, long readFrom)
    {
        lock (gate)
        {
            var committed = readFrom >= 0 && _versions.Count > 0 ? FoldVersionsUpTo(readFrom) : _committed;

            // At key level, ACTs holding other keys may have installed meanwhile: only this one's changes are applied.
            _committed = _latest = keyLevel ? Applied(committed, written) : written;
            _latestShared = true;
        }
    }

    /// <summary>The committed state with the versions of batches up to <paramref name="bid"/> applied in bid order, which leave the versions.</summary>
    private TState FoldVersionsUpTo(long bid)
    {
        var committed = _committed;
        while (_versions.Count > 0)
        {
            var oldest = long.MaxValue;
            foreach (var versionBid in _versions.Keys)
            {
                oldest = Math.Min(oldest, versionBid);
            }

            if (oldest > bid || !_versions.Remove(oldest, out var version))
            {
                break;
            }

            committed = keyLevel ? Applied(committed, version) : version;
        }

        return committed;
    }

    /// <summary>
    /// Whether ACTs may hold single keys here (key level): not while a version must log the whole state (its base is not
    /// in this silo's log), since a whole state is ordered per actor, not per key (see <see cref="Logging.RecoveredActor.Advance"/>).
    /// </summary>
    public bool KeyedActsAllowed
    {
        get
        {
            lock (gate)
            {
                return keyLevel && _latest is IKeyedVersion { BaseInLog: true };
            }
        }
    }

    /// <summary>
    /// An ACT's copy at key level, with <paramref name="fresh"/> (keys it just locked) taken from the state after the
    /// batches before it and the ACTs that held those keys before it: made now if <paramref name="working"/> is null.
    /// Its changes are logged as ordered per key.
    /// </summary>
    public TState ForKeyedAct(TState? working, IReadOnlyCollection<object> fresh)
    {
        lock (gate)
        {
            var head = _latestShared ? _latest : _committed;
            if (working is null)
            {
                working = (TState)Keyed(head).NewVersion();
                Keyed(working).OrderPerKey();
            }
            else if (fresh.Count > 0)
            {
                Keyed(working).TakeKeys(head, fresh);
            }

            return working;
        }
    }

    /// <summary>An ACT's copy once it holds the actor whole: the latest state with the changes it made so far.</summary>
    public TState Refreshed(TState working)
    {
        lock (gate)
        {
            return Applied(_latestShared ? _latest : _committed, working);
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

    public CompletedVersion BatchCompleted(long bid)
    {
        if (_latestShared && _versions.TryGetValue(bid, out var keyed))
        {
            return ForLog(keyed, ++_seq); // made by its PACTs' changes, key by key
        }

        if (_latestShared)
        {
            return default;
        }

        _versions[bid] = _latest;
        _latestShared = true;
        return ForLog(_latest, ++_seq);
    }

    /// <summary>
    /// Before the running batch first changes <c>Latest</c> in place: a copy of it replaces it wherever it is kept as the
    /// committed state or a completed batch's version (a batch that only read leaves none, so that is at most one
    /// version, the newest), and keeps what they hold for a commit or an abort.
    /// </summary>
    private void KeepCopyOfLatest()
    {
        var kept = copy(_latest);
        if (ReferenceEquals(_committed, _latest))
        {
            _committed = kept;
        }

        foreach (var (bid, version) in _versions)
        {
            if (ReferenceEquals(version, _latest))
            {
                _versions[bid] = kept;
                break; // at most one
            }
        }
    }

    /// <summary>A completed version in log form, taken now, before a next batch may change the object (see <see cref="KeepCopyOfLatest"/>).</summary>
    private CompletedVersion ForLog(TState version, long seq)
    {
        if (logForm is null)
        {
            return new CompletedVersion(null, seq);
        }

        try
        {
            return new CompletedVersion(logForm(version), seq, Actor: logName);
        }
        catch (Exception exception)
        {
            return new CompletedVersion(null, seq, exception); // the batch aborts: a vote whose state is not logged cannot stand
        }
    }

    public void BatchCommitted(long bid)
    {
        if (_versions.Remove(bid, out var version))
        {
            // At key level a version holds its batch's changes, not necessarily the state after every earlier batch.
            _committed = keyLevel ? Applied(_committed, version) : version;
        }
    }

    public void DropAfter(long keptUpTo, bool keepWorking = false)
    {
        foreach (var bid in _versions.Keys.Where(bid => bid > keptUpTo).ToArray())
        {
            _versions.Remove(bid);
        }

        if (keyLevel && _latestShared)
        {
            // Rebuilt from what is left: the committed state and the kept batches' changes, in bid order.
            _latest = _committed;
            foreach (var bid in _versions.Keys.Order())
            {
                _latest = Applied(_latest, _versions[bid]);
            }

            return;
        }

        if (keepWorking)
        {
            return;
        }

        _latest = _versions.Count > 0 ? _versions[_versions.Keys.Max()] : _committed;
        _latestShared = true;
    }

    public void PactDropped(long tid) => _pactVersions?.Remove(tid);

    private static IKeyedVersion Keyed(TState state) => (IKeyedVersion)state;

    /// <summary>A new version: <paramref name="state"/> with the changes of <paramref name="version"/> applied.</summary>
    private static TState Applied(TState state, TState version)
    {
        var next = (TState)Keyed(state).NewVersion();
        Keyed(version).ApplyChangesTo(next);
        return next;
    }

    /// <summary>A keyed PACT's own version and the keys it took from the latest state so far.</summary>
    private sealed class PactVersion(TState version)
    {
        public TState Version { get; } = version;

        public HashSet<object> Keys { get; } = new();
    }
}
