namespace Snapper.Hosting;

/// <summary>
/// Switches that break Snapper on purpose, for tests that prove the serializability checker catches a broken schedule,
/// and fault injection for the write-ahead log. A DI singleton, all off unless a test registers its own instance
/// (<c>services.AddSingleton(new SnapperTestHooks { ... })</c> before <c>AddSnapper</c>); kept out of
/// <see cref="SnapperOptions"/> so that no configuration file can turn them on.
/// </summary>
internal sealed class SnapperTestHooks
{
    /// <summary><see cref="AccessMode.Read"/> takes no lock: breaks ACT serializability.</summary>
    public bool SkipReadLocks { get; init; }

    /// <summary>
    /// With <see cref="HybridScheduling.CommittedBatchesOnly"/>, ACTs and PACT batches ignore each other on an actor; with
    /// <see cref="HybridScheduling.SerializabilityCheck"/>, an ACT skips the check and commits without waiting for the
    /// batches it read from. Either breaks serializability of hybrid workloads.
    /// </summary>
    public bool SkipHybridGate { get; init; }

    /// <summary>
    /// Called by a logger with the record payloads of a group it wrote (the file has them) before it fsyncs them: may
    /// throw (a write that failed after reaching the file) or block (a stalled disk). A payload's first byte is its
    /// <see cref="Logging.LogRecordType"/>.
    /// </summary>
    public Action<byte[][]>? AfterLogWrite { get; set; }

    /// <summary>
    /// The master does not tell worker <c>worker</c> that global batch <c>gbid</c> committed when this returns true, as
    /// if the worker crashed before hearing it (the commit stays open at the master).
    /// </summary>
    public Func<int, long, bool>? WithholdGlobalCommit { get; set; }

    /// <summary>
    /// An ACT's first actor does not send "commit" to this participant when this returns true, as if the participant
    /// crashed before hearing it (the commit stays open at the first actor).
    /// </summary>
    public Func<GrainId, bool>? WithholdActCommit { get; set; }

    /// <summary>
    /// An ACT's first actor sends the commit to participant <c>participant</c>, which commits, but the acknowledgement is
    /// lost on the way back when this returns true: the participant knows the outcome and never asks for it.
    /// </summary>
    public Func<GrainId, bool>? DropActCommitAcknowledgement { get; set; }

    /// <summary>
    /// Worker <c>worker</c> marks its part of global batch <c>gbid</c> voted but does not send the vote when this returns
    /// true, as if the message were lost: the master holds the batch undecided.
    /// </summary>
    public Func<int, long, bool>? WithholdGlobalVote { get; set; }

    /// <summary>
    /// Worker <c>worker</c> asks the master about its voted part of global batch <c>gbid</c> only once the returned task
    /// completes (null: at once): a test orders the answers about two parts.
    /// </summary>
    public Func<int, long, Task?>? DelayOutcomeQuestion { get; set; }

    /// <summary>
    /// The master delivers global sub-batch <c>gbid</c> to worker <c>worker</c> only once the returned task completes
    /// (null: at once), as if the message were slow: a test makes a global batch reach one worker well before another.
    /// </summary>
    public Func<int, long, Task?>? DelayGlobalDelivery { get; set; }

    /// <summary>
    /// Called on worker <c>worker</c> when it has taken global sub-batch <c>gbid</c> from its arrivals to merge it into its
    /// local order, before the part is registered: a test delivers the master's abort of that batch at exactly this point.
    /// </summary>
    public Action<int, long>? BeforeGlobalPartMerged { get; set; }

    /// <summary>
    /// The master tells worker <c>worker</c> that the global batches from <c>gbid</c> on aborted only once the returned task
    /// completes (null: at once), and not at all if it faults, as if that message were slow or lost.
    /// </summary>
    public Func<int, long, Task?>? DelayGlobalAbort { get; set; }

    /// <summary>
    /// Worker <c>worker</c> takes the finish of global PACT <c>gtid</c> (its first method returned; the worker releases the
    /// accesses it declared there and did not make) only once the returned task completes (null: at once), and the finish
    /// call fails if it faults, as if that message were slow or lost.
    /// </summary>
    public Func<int, long, Task?>? DelayGlobalFinish { get; set; }

    /// <summary>
    /// The participant watchdog of actor <c>actor</c> gives up on ACT <c>tid</c> at its next round, as if the ACT had been idle
    /// there past ParticipantTimeout, when this returns true: a test has a participant abort on its own while the first actor
    /// still runs the ACT (under load the first actor's own bound can fire late, so this happens without the hook too).
    /// </summary>
    public Func<GrainId, long, bool>? ParticipantGivesUp { get; set; }

    /// <summary>
    /// The master acts on the death of worker <c>worker</c>'s silo, heard from membership, only once the returned task
    /// completes (null: at once): a test submits a transaction between the death being heard and the aborts it causes, so
    /// the client's wait does not include the time a silo takes to restart.
    /// </summary>
    public Func<int, Task?>? BeforeWorkerLostAbort { get; set; }

    /// <summary>
    /// A migration of actor <c>actor</c> goes on past its freeze (every worker frozen, nothing handed over yet) only once
    /// the returned task completes (null: at once): a test holds an actor frozen while it submits transactions to it.
    /// </summary>
    public Func<GrainId, Task?>? AfterMigrationFreeze { get; set; }

    /// <summary>
    /// Called with actor <c>actor</c> and ACT <c>tid</c> when a call of that ACT has taken its place in the actor's schedule
    /// (let in, or waiting for the batches before it): a test learns that a parallel call got that far.
    /// </summary>
    public Action<GrainId, long>? ActPlaced { get; set; }

    /// <summary>
    /// A call of ACT <c>tid</c> let in on actor <c>actor</c> past the batches before it goes on (to its locks and the state)
    /// only once the returned task completes (null: at once): a test holds one call there while another call of the same
    /// ACT arrives on the actor.
    /// </summary>
    public Func<GrainId, long, Task?>? ActAdmitted { get; set; }

    /// <summary>
    /// Called with a submitted PACT's declaration just before it is ordered (by the token holder for a local PACT, by the
    /// submitter before it sends a global one to the master): a test changes the declaration there, or keeps it to change
    /// it later, as a caller in the same silo, which shares the object with the PACT, could.
    /// </summary>
    public Action<ActorAccessInfo>? BeforePactOrdered { get; set; }

    /// <summary>
    /// Called with actor <c>actor</c>, ACT <c>tid</c> and a few words at each step of the ACT's commit protocol there (its
    /// start, a vote, a commit or abort heard, a question about the outcome and its answer, its end, and the decision on the
    /// first actor): the history tests print the steps of a transaction the checker finds wrong.
    /// </summary>
    public Action<GrainId, long, string>? ActTrace { get; set; }

    /// <summary>
    /// Called with the callee's actor when a call inside a transaction starts on it as a local call (<see
    /// cref="SnapperOptions.LocalCalls"/>), on the caller's thread, before it reaches the callee's scheduler.
    /// </summary>
    public Action<GrainId>? LocalCallStarted { get; set; }

    /// <summary>
    /// Called with the calling actor when a PACT's call to another actor got its answer, where the answer arrived (not
    /// on the caller's turn), before the call counts as ended on the caller.
    /// </summary>
    public Action<GrainId>? PactCallAnswered { get; set; }

    /// <summary>Called with the actor when an activation that takes local calls begins to end (it still takes them until none runs).</summary>
    public Action<GrainId>? LocalCallsEnding { get; set; }
}
