namespace Snapper.Pact;

/// <summary>A batch as its coordinator tracks it until it commits or aborts (thesis §3.3.2.4).</summary>
internal sealed class PactBatch(long bid, long lastTid, GrainId[] participants, TaskCompletionSource<SnapperException?>? outcome = null)
{
    public long Bid { get; } = bid;

    /// <summary>The tid of the batch's last PACT (its PACTs have the tids from <see cref="Bid"/> to this one).</summary>
    public long LastTid { get; } = lastTid;

    public GrainId[] Participants { get; } = participants;

    /// <summary>
    /// The participants' schedules in this silo, index for index with <see cref="Participants"/>, kept from delivery so
    /// that committing does not look each one up again (set when the batch is registered, local batches and global parts alike).
    /// </summary>
    public Scheduling.ActorSchedule[]? Schedules { get; set; }

    /// <summary>For a worker's part of a global batch: its gbid (else -1). Its PACTs keep their global tids (<see cref="GlobalTids"/>).</summary>
    public long Gbid { get; init; } = -1;

    public bool IsGlobal => Gbid >= 0;

    /// <summary>Its place in the order the hybrid check compares batches of every worker in (set when emitted).</summary>
    public Hybrid.BatchPosition Position { get; set; } = Hybrid.BatchPosition.None;

    /// <summary>The global tids of a global part's PACTs (null for a local batch, whose tids are <see cref="Bid"/>..<see cref="LastTid"/>).</summary>
    public long[]? GlobalTids { get; init; }

    /// <summary>The incarnation of the master that emitted this global part (see <see cref="Cluster.GlobalSubBatch.MasterEpoch"/>).</summary>
    public Guid MasterEpoch { get; init; }

    /// <summary>A global part this worker voted for: only the master decides it now, so a local abort leaves it alone.</summary>
    public bool Voted { get; set; }

    /// <summary>When this worker voted (<see cref="System.Diagnostics.Stopwatch"/> ticks): a part undecided for too long is asked about.</summary>
    public long VotedAt { get; set; }

    /// <summary>This worker is asking the master for the outcome of this voted part.</summary>
    public bool Asking { get; set; }

    /// <summary>The master committed this global part; it commits here in bid order like a local batch.</summary>
    public bool GloballyCommitted { get; set; }

    /// <summary>Whether it may commit here once every earlier batch has: complete, and for a global part decided by the master.</summary>
    public bool ReadyToCommit => Pending == 0 && (!IsGlobal || GloballyCommitted);

    /// <summary>When the batch was emitted (<see cref="System.Diagnostics.Stopwatch"/> ticks), for the execution bound and the commit lag.</summary>
    public long EmittedAt { get; } = System.Diagnostics.Stopwatch.GetTimestamp();

    private int _pending = participants.Length;

    /// <summary>Participants that have not reported BatchComplete yet.</summary>
    public int Pending => Volatile.Read(ref _pending);

    /// <summary>Counts one participant's BatchComplete (without the coordinator's lock); returns how many are still pending.</summary>
    public int Complete() => Interlocked.Decrement(ref _pending);

    /// <summary>Its BatchCommit record is being written: it commits, and a cascading abort leaves it alone.</summary>
    public bool Committing { get; set; }

    /// <summary>Its BatchCommit record is durable; it commits once every earlier batch has.</summary>
    public bool CommitLogged { get; set; }

    /// <summary>
    /// Completes with null when the batch commits, with the abort of the PACT that failed it, or with
    /// <see cref="TransactionInDoubtException"/> when its commit record may or may not be on disk.
    /// </summary>
    public TaskCompletionSource<SnapperException?> Outcome { get; } = outcome ?? new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>
    /// Made by the first ACT of this silo that waits for the batch to be ordered before its own commit
    /// (<see cref="PactService.WhenCommitsQueuedHereAsync"/>); null while nobody waits, which is almost always.
    /// </summary>
    private TaskCompletionSource<bool>? _commitQueued;

    /// <summary>
    /// Completes with true once the batch's commit record is queued on the ordered logger (without a log, once it
    /// committed), with false if it aborts or ends in doubt first. Under the coordinator's lock, under which
    /// <see cref="Committing"/> is set and the record queued in one step (PactService.CommitInOrder): a batch seen
    /// committing here has its record queued already.
    /// </summary>
    public Task<bool> WhenCommitQueued() =>
        (Committing ? Task.FromResult(true) : (_commitQueued ??= new(TaskCreationOptions.RunContinuationsAsynchronously)).Task);

    /// <summary>The batch's commit record is queued, or it committed: ACTs waiting to be ordered after it go on. Under the coordinator's lock.</summary>
    public void CommitQueued() => _commitQueued?.TrySetResult(true);

    /// <summary>Resolves the batch: its clients hear <paramref name="outcome"/> (null: committed). Under the coordinator's lock.</summary>
    public void Resolve(SnapperException? outcome)
    {
        Outcome.TrySetResult(outcome);
        _commitQueued?.TrySetResult(outcome is null);
    }
}
