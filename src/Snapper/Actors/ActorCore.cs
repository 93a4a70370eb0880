using Microsoft.Extensions.Logging;
using Snapper.Act;
using Snapper.Scheduling;

namespace Snapper.Actors;

/// <summary>
/// Everything Snapper keeps for one transactional actor in a silo: its committed state and the versions PACT batches
/// left on it, its local schedule, its ACT locks, the ACTs running on it and the outcomes it remembers. Kept by the
/// silo (<see cref="ActorDirectory"/>), not by the grain activation, so that an activation ending for any reason
/// (<c>DeactivateOnIdle</c>, <c>MigrateOnIdle</c> to the same silo, idle collection, rebalancing) loses nothing: the
/// next activation on this silo picks up the same core, with its committed state and its uncommitted work.
/// </summary>
/// <remarks>
/// Thread safety: <see cref="State"/> and <see cref="Schedule"/> have their own lock (the schedule's gate), since the
/// PACT service reaches them from outside the grain. <see cref="Transactions"/>, <see cref="Lock"/> and
/// <see cref="Ended"/> are touched only from turns of the activation that owns the core (<see cref="Owner"/>): Orleans
/// runs one turn of an activation at a time, and creates the next activation of a grain only after the previous one
/// finished deactivating, which it starts only when no request of it is running. Work an old activation left behind
/// (the fire-and-forget continuation of a watchdog check) checks <see cref="IsOwnedBy"/> before it touches them.
/// </remarks>
internal sealed class ActorCore<TState> where TState : class
{
    public ActorCore(GrainId self, SnapperRuntime runtime, ILogger logger, TState initial, long lastSeq, bool keyLevel = false)
    {
        Self = self;
        Runtime = runtime;
        Logger = logger;
        Schedule = runtime.Pacts.ScheduleOf(self);
        LogName = runtime.Log.Enabled ? self.ToString() : null;
        State = new StateVersions<TState>(Schedule.Gate, initial, runtime.Copy, lastSeq, keyLevel, runtime.Log.Enabled ? runtime.LogForm : null, LogName);
        Schedule.Attach(State);
        Participant = new ActParticipant<TState>(this);
        Coordinator = new ActCoordinator<TState>(this);
    }

    public GrainId Self { get; }

    /// <summary>
    /// The actor's name as its log records carry it (null when the silo does not log): made once here, since every
    /// state record of the actor names it.
    /// </summary>
    public string? LogName { get; }

    public SnapperRuntime Runtime { get; }

    public ILogger Logger { get; }

    public ActorSchedule Schedule { get; }

    /// <summary>The test hook that follows ACTs step by step (<see cref="Hosting.SnapperTestHooks.ActTrace"/>); null unless a test set it.</summary>
    public Action<GrainId, long, string>? ActTrace => Runtime.TestHooks.ActTrace;

    public StateVersions<TState> State { get; }

    /// <summary>
    /// The actor's ACT lock. On a key-level actor an ACT that uses keys holds it for reading (an intention: it uses part
    /// of the actor) and each key's lock in <see cref="KeyLocks"/>; using the actor whole takes it for writing, so it
    /// excludes every key's users. Wait-die holds across both levels: every wait, on either, is of an older transaction
    /// for younger ones.
    /// </summary>
    public WaitDieLock Lock { get; } = new();

    /// <summary>Per key of a key-level actor: the ACT locks of the keys in use.</summary>
    public KeyLocks KeyLocks { get; } = new();

    /// <summary>Releases the key locks <paramref name="txn"/> holds or asked for.</summary>
    public void ReleaseKeys(ActorTransaction<TState> txn)
    {
        if (txn.LockedAnyKey)
        {
            KeyLocks.Release(txn.Tid, txn.Doomed, txn.LockedKeys);
            txn.LockedKeys.Clear();
        }
    }

    /// <summary>See <see cref="WaitDieLock.HolderWaitsForBatches"/>: for the actor's lock and every key lock of <paramref name="txn"/>.</summary>
    public void HolderWaitsForBatches(ActorTransaction<TState> txn)
    {
        Lock.HolderWaitsForBatches(txn.Tid);
        if (txn.LockedAnyKey)
        {
            KeyLocks.HolderWaitsForBatches(txn.Tid, txn.LockedKeys);
        }
    }

    /// <summary>
    /// What a library subclass keeps for each PACT running here (a key-value actor's view of its state); several run at
    /// once on disjoint keys of a key-level actor. Touched under the schedule's gate; an entry goes once the schedule no
    /// longer knows its PACT (see <see cref="PactScoped{T}"/>).
    /// </summary>
    private Dictionary<long, object>? _pactScoped; // made at the first use: only a key-value actor keeps anything here

    /// <summary>The object kept for PACT <paramref name="tid"/> here, made by <paramref name="create"/> the first time (null: only look).</summary>
    public T? PactScoped<T>(long tid, Func<T>? create)
        where T : class
    {
        lock (Schedule.Gate)
        {
            if (_pactScoped?.TryGetValue(tid, out var held) == true)
            {
                return (T)held;
            }

            if (create?.Invoke() is not { } made)
            {
                return null;
            }

            _pactScoped ??= new();
            if (_pactScoped.Count >= 16)
            {
                foreach (var ended in _pactScoped.Keys.Where(t => !Schedule.Knows(t)).ToArray())
                {
                    _pactScoped.Remove(ended);
                }
            }

            _pactScoped[tid] = made;
            return made;
        }
    }

    /// <summary>ACTs that have run a method here and not ended here.</summary>
    public Dictionary<long, ActorTransaction<TState>> Transactions { get; } = new();

    /// <summary>
    /// Only outcomes a late message could need: commits not yet acknowledged by every prepared participant (a
    /// participant may ask Resolve), and transactions this actor aborted on its own (a late call must be refused, not
    /// start the transaction afresh). Presumed abort covers everything else.
    /// </summary>
    public RecentOutcomes Ended { get; } = new();

    /// <summary>The ACT participant role: prepare, commit, abort, resolve, and the participant watchdog.</summary>
    public ActParticipant<TState> Participant { get; }

    /// <summary>The ACT first-actor role: two-phase commit with the hybrid check.</summary>
    public ActCoordinator<TState> Coordinator { get; }

    /// <summary>The activation serving this actor now; null between the end of one activation and the start of the next.</summary>
    public IWatchedActivation? Owner { get; private set; }

    // The activation this core put on the participant watchdog's list, if any (see ParticipantWatchdog).
    private IWatchedActivation? _onWatch;

    /// <summary>Whether ACTs are running here or PACT batches are uncommitted here.</summary>
    public bool HasUncommittedWork => Transactions.Count > 0 || Schedule.UncommittedBatchCount > 0;

    public bool IsOwnedBy(object activation) => ReferenceEquals(Owner, activation);

    /// <summary>The activation <paramref name="activation"/> serves this actor from now on.</summary>
    public void Adopt(IWatchedActivation activation)
    {
        if (_onWatch is { } previous)
        {
            Runtime.Watchdog.Remove(previous);
            _onWatch = null;
        }

        Owner = activation;
        StartWatch();
    }

    /// <summary>
    /// The activation <paramref name="activation"/> is ending: it leaves the watchdog's list and owns the core no more, so
    /// that work it left behind (a watchdog check's continuation) touches nothing. Runs in a turn of its deactivation (the
    /// stop step of its life cycle); the actor's ACTs and outcomes stay here for its next activation, which the next message
    /// to the actor creates and which watches them again. Until then their bounds wait too, but nothing waits on them:
    /// whatever wants this actor's locks or its answer reaches it by a message, which activates it.
    /// </summary>
    public void Release(IWatchedActivation activation)
    {
        if (ReferenceEquals(_onWatch, activation))
        {
            _onWatch = null;
            Runtime.Watchdog.Remove(activation);
        }

        if (ReferenceEquals(Owner, activation))
        {
            Owner = null;
        }
    }

    /// <summary>
    /// Puts the owning activation on the participant watchdog's list if the actor has something to watch: an ACT running
    /// here, or an outcome it remembers. Called whenever either begins; runs in the owner's turns.
    /// </summary>
    public void StartWatch()
    {
        if (_onWatch is null && Owner is { } owner && NeedsWatch)
        {
            _onWatch = owner;
            Runtime.Watchdog.Add(owner);
        }
    }

    /// <summary>Takes the owning activation off the watchdog's list once nothing is left to watch; runs in the owner's turns.</summary>
    public void StopWatchIfIdle()
    {
        if (_onWatch is { } watched && !NeedsWatch)
        {
            _onWatch = null;
            Runtime.Watchdog.Remove(watched);
        }
    }

    /// <summary>Forgets the outcome of <paramref name="tid"/> (every participant knows it now).</summary>
    public void ForgetOutcome(long tid)
    {
        Ended.Forget(tid);
        StopWatchIfIdle();
    }

    private bool NeedsWatch => Transactions.Count > 0 || Ended.Count > 0;
}
