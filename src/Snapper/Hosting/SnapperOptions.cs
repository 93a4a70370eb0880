namespace Snapper.Hosting;

/// <summary>
/// Settings of Snapper in a silo. Bind them from configuration with
/// <c>siloBuilder.AddSnapper(configuration.GetSection("Snapper"))</c> or set them in code with
/// <c>siloBuilder.AddSnapper(o =&gt; ...)</c>. Every wait in the protocol has one of these bounds.
/// </summary>
public sealed class SnapperOptions
{
    /// <summary>The configuration section name used by convention: "Snapper".</summary>
    public const string SectionName = "Snapper";

    /// <summary>
    /// This silo's part in a cluster (thesis §4.2): <see cref="SiloRole.Embedded"/> (the default) does everything in one
    /// silo; a SnapperD cluster has one <see cref="SiloRole.Master"/> and <see cref="Workers"/> silos of role
    /// <see cref="SiloRole.Worker"/>, each with its own <see cref="WorkerIndex"/> and data folder.
    /// </summary>
    public SiloRole Role { get; set; } = SiloRole.Embedded;

    /// <summary>
    /// Worker silos in the cluster (master and workers must agree). Actors are placed on workers by their id's hash modulo
    /// this number, unless an <see cref="Cluster.IActorPlacement"/> says otherwise, so an actor always returns to the same
    /// worker and its log. At most 64. Default: 1.
    /// </summary>
    public int Workers { get; set; } = 1;

    /// <summary>
    /// Workers the actors that never moved are hashed over: workers 0 to <c>HomeWorkers</c> - 1 (the same on every silo).
    /// The workers after them start empty and receive actors only by migration: room to scale out, a cluster declared
    /// with 4 workers and 2 home workers runs on 2 silos and grows to 4 by starting the others and moving actors to them
    /// (<c>ActorMigration.RebalanceAsync</c>). Zero, the default, means every worker.
    /// </summary>
    public int HomeWorkers { get; set; }

    /// <summary>A worker's number, from 0 to <see cref="Workers"/> - 1, unique in the cluster. Ignored on other roles.</summary>
    public int WorkerIndex { get; set; }

    /// <summary>
    /// Whether a worker votes for a global batch that follows other global batches it already voted for without waiting
    /// for their commit (thesis §4.2.3.4, the commit shortcut): the master commits global batches in order, so their
    /// outcomes cannot contradict. Off, a worker votes for a global batch only once every earlier local batch has
    /// committed. Default: true.
    /// </summary>
    public bool GlobalCommitShortcut { get; set; } = true;

    /// <summary>
    /// Whether a call inside a transaction (<c>CallActor</c>) to an actor whose activation is in the same silo runs on that
    /// activation's own task scheduler, as a reentrant call of Orleans would, instead of as an Orleans message: the call
    /// skips the message, its callback and its response, and keeps the actor's turn-based execution. Calls to actors in
    /// other silos, not active yet, or whose activation is ending are Orleans calls either way. Default: true.
    /// </summary>
    public bool LocalCalls { get; set; } = true;

    /// <summary>
    /// Longest the master gathers global PACTs into one batch (thesis §4.2.3.3, tuned batching): zero emits whatever
    /// arrived while the previous batch was being emitted; a few milliseconds make fewer, larger global batches, each
    /// costing the workers one commit round trip to the master. Default: zero.
    /// </summary>
    public TimeSpan GlobalBatchInterval { get; set; } = TimeSpan.Zero;

    /// <summary>Coordinators in a silo's PACT ring (thesis §3.3.2.1): each gathers the PACTs of the actors hashed to it while the token is elsewhere. Default: 2 per processor, at least 2.</summary>
    public int Coordinators { get; set; } = Math.Max(2, 2 * Environment.ProcessorCount);

    /// <summary>How many ACT tids a silo reserves at the tid sequencer at a time. Default: 1,000.</summary>
    public int ActTidRangeSize { get; set; } = 1_000;

    /// <summary>Longest an ACT waits for a lock before it aborts with <see cref="AbortReason.LockTimeout"/>. Default: 5 s.</summary>
    public TimeSpan LockWaitTimeout { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>
    /// How ACTs and PACT batches share an actor (thesis §3.3.4). Default: <see cref="Hosting.HybridScheduling.SerializabilityCheck"/>.
    /// </summary>
    public HybridScheduling HybridScheduling { get; set; } = HybridScheduling.SerializabilityCheck;

    /// <summary>
    /// How long an ACT may wait on an actor for the PACT batches scheduled before it (to complete, or, with
    /// <see cref="Hosting.HybridScheduling.CommittedBatchesOnly"/>, to commit) before it gives way
    /// (<see cref="AbortReason.HybridDeadlock"/>). Such a wait can close a cycle with a batch that waits for the
    /// ACT elsewhere (thesis §3.3.4.2); this bound breaks it. With <c>CommittedBatchesOnly</c> an ACT that already
    /// holds an actor does not wait at all. Default: 1 ms (SmallBank, Zipf 0.9, 90 % PACTs: hybrid reached 0.87 of
    /// pure PACT with 1 ms, 0.82-0.83 with 10 and 100 ms, since a waiting ACT holds its client's slot while batches
    /// keep coming).
    /// </summary>
    public TimeSpan HybridWaitTimeout { get; set; } = TimeSpan.FromMilliseconds(1);

    /// <summary>
    /// Longest the first method of a transaction (with all the calls it awaits) may run before the transaction
    /// aborts with <see cref="AbortReason.ExecutionTimeout"/>. Default: 15 s.
    /// </summary>
    public TimeSpan ExecutionTimeout { get; set; } = TimeSpan.FromSeconds(15);

    /// <summary>Longest the first actor waits for all prepare votes (and for commit or abort acknowledgements). Default: 5 s.</summary>
    public TimeSpan PrepareTimeout { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>
    /// Longest a participant keeps an unprepared transaction without hearing from it before it aborts the
    /// transaction on its own. Must exceed <see cref="ExecutionTimeout"/>. Default: 30 s.
    /// </summary>
    public TimeSpan ParticipantTimeout { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>How long a prepared participant waits for the decision before asking the first actor for it. Default: 10 s.</summary>
    public TimeSpan DecisionTimeout { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>
    /// Folder of the write-ahead log (thesis §3.3.2.4, §3.3.3.3): every committed transaction is logged there before
    /// its client hears of it, and a restarted silo recovers every actor's committed state from it. Null (the
    /// default) runs without a log: state lives only in memory and a crash loses it (the "CC only" setting of
    /// thesis §3.4.2.1). One silo per folder: a second one is refused.
    /// </summary>
    public string? DataFolder { get; set; }

    /// <summary>
    /// Loggers (log writers, each with its own thread and segment files) per silo. Default: 1, which puts every record
    /// on one ordered log, so a commit waits for a single fsync. With more, actors' state records are spread over the
    /// loggers by actor and each is made durable before its actor votes, as in the thesis: more files written in
    /// parallel, but two fsyncs in sequence on every commit (slower on a single disk, see the durability section of
    /// README.md).
    /// </summary>
    public int Loggers { get; set; } = 1;

    /// <summary>
    /// Whether a log write is fsynced before the transactions in it are acknowledged. Default: true. Turning it off
    /// is for experiments only: a machine crash can then lose acknowledged transactions (a warning says so at start).
    /// </summary>
    public bool LogFsync { get; set; } = true;

    /// <summary>
    /// Size at which a logger starts a new segment file. Segments are preallocated (zero-filled ahead of use, so that
    /// an fsync flushes data only): a logger that writes keeps up to two of this size on disk. Default: 16 MiB.
    /// </summary>
    public long LogSegmentBytes { get; set; } = 16L * 1024 * 1024;

    /// <summary>
    /// How often the write-ahead log is checkpointed: the committed state of every actor is written to a checkpoint
    /// file and the log segments it covers are deleted, so that restart time and disk use stay bounded by what one
    /// interval writes rather than growing with uptime. <see cref="TimeSpan.Zero"/> turns checkpoints off (the log
    /// then grows without bound). Default: 1 minute.
    /// </summary>
    public TimeSpan CheckpointInterval { get; set; } = TimeSpan.FromMinutes(1);

    /// <summary>
    /// Longest a commit waits for its log record to become durable. A record not confirmed by then (a stalled or failed
    /// disk) may or may not be on disk: its transactions are reported with <see cref="TransactionInDoubtException"/>,
    /// PACT commits stop in the silo, and recovery decides after a restart. Default: 10 s.
    /// </summary>
    /// <remarks>
    /// A client hears Snapper's typed outcome only if it comes before the client's own response timeout (Orleans'
    /// <c>ClientMessagingOptions.ResponseTimeout</c>, 30 s by default), after which it gets Orleans' untyped timeout
    /// instead. A PACT may spend up to <see cref="ExecutionTimeout"/> running and then this long on its commit record, so
    /// keep the two together below the clients' response timeout: the defaults, 15 s and 10 s, leave 5 s to spare.
    /// </remarks>
    public TimeSpan LogWriteTimeout { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>
    /// Most appends a logger holds queued and not yet written. New transactions wait for room before they start
    /// (backpressure), so a disk slower than the load slows clients down instead of filling memory; appends of
    /// transactions already running never wait. Default: 65,536.
    /// </summary>
    public int LogQueueCapacity { get; set; } = 65_536;

    /// <summary>
    /// Most PACTs submitted in the silo and not yet ordered into a batch. A submission that finds no room waits for it,
    /// up to <see cref="ExecutionTimeout"/> (then it aborts with <see cref="AbortReason.OrderingFailed"/> without having
    /// run). Default: 65,536.
    /// </summary>
    public int PactQueueCapacity { get; set; } = 65_536;

    /// <summary>
    /// How long an actor remembers the outcome of an ended transaction, for late messages. A commit some participant has not
    /// acknowledged is kept longer, until it has: in the log's open commits, or, without a log, in memory. Default: 5 min.
    /// </summary>
    public TimeSpan OutcomeRetention { get; set; } = TimeSpan.FromMinutes(5);
}
