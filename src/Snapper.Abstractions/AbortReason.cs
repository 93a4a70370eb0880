namespace Snapper;

/// <summary>Why a transaction was aborted. Carried by <see cref="TransactionAbortedException"/>.</summary>
[GenerateSerializer]
public enum AbortReason
{
    /// <summary>User code threw; the original exception is the inner exception.</summary>
    UserException,

    /// <summary>Wait-die: a younger transaction asked for a lock held or awaited by an older one.</summary>
    WaitDie,

    /// <summary>A lock wait exceeded <c>SnapperOptions.LockWaitTimeout</c>.</summary>
    LockTimeout,

    /// <summary>
    /// A participant voted no, or did not answer the prepare within <c>SnapperOptions.PrepareTimeout</c>; or, for a global
    /// PACT, a worker did not confirm within <c>SnapperOptions.ExecutionTimeout</c> that it released the accesses the PACT
    /// declared there and did not make.
    /// </summary>
    PrepareFailed,

    /// <summary>
    /// A participant held the transaction without hearing from its first actor for longer than
    /// <c>SnapperOptions.ParticipantTimeout</c> and aborted it; a later call of the transaction that reaches it fails with
    /// this reason too.
    /// </summary>
    ParticipantTimeout,

    /// <summary>The transaction's methods ran longer than <c>SnapperOptions.ExecutionTimeout</c>.</summary>
    ExecutionTimeout,

    /// <summary>A method returned while a <c>CallActor</c> it started was still running (a call that was not awaited).</summary>
    UnawaitedCall,

    /// <summary>A call inside the transaction named an unknown method, passed a wrong input, or used the API outside the transaction.</summary>
    InvalidCall,

    /// <summary>
    /// A PACT called an actor it did not declare in its <c>ActorAccessInfo</c>, or called an actor more often than
    /// it declared. The message names the actor.
    /// </summary>
    UndeclaredAccess,

    /// <summary>
    /// A PACT was aborted because another PACT in its batch, or in an earlier batch it may have read from, failed
    /// (thesis §3.3.2.4: a failed batch aborts every uncommitted batch). Where the silo knows which transaction failed
    /// first, the PACT's client finds that one's abort, with its own reason (a user exception, a worker lost, a timeout), in
    /// <see cref="System.Exception.InnerException"/>.
    /// </summary>
    CascadingAbort,

    /// <summary>
    /// An ACT met uncommitted PACT batches on an actor: it waited longer than <c>SnapperOptions.HybridWaitTimeout</c>
    /// for them to commit, or, holding other actors already, could not wait without risking a cycle with the
    /// batches (thesis §3.3.4.2), so it gave way to them.
    /// </summary>
    HybridDeadlock,

    /// <summary>
    /// Hybrid serializability check (thesis §3.3.4.3): a PACT batch the ACT depends on (its BeforeSet) does not
    /// precede every batch that depends on the ACT (its AfterSet), so committing it would close a cycle.
    /// </summary>
    Serializability,

    /// <summary>
    /// Hybrid serializability check (thesis §3.3.4.3) with an incomplete AfterSet: on some actor of the ACT no batch
    /// was scheduled after it yet, and a batch it depends on had not committed, so the check could not prove the
    /// ACT safe. Such aborts can be false ones; retrying usually succeeds.
    /// </summary>
    SerializabilityIncompleteAfterSet,

    /// <summary>
    /// The write-ahead log could not make the commit durable (the disk failed). The silo's log refuses every later
    /// write, so nothing commits until the silo is restarted; recovery then holds no trace of this transaction.
    /// </summary>
    LogWriteFailed,

    /// <summary>
    /// The transaction could not be ordered: no transaction id could be had from Snapper's sequencer within
    /// <c>SnapperOptions.ExecutionTimeout</c>, or it failed. Nothing of it ran.
    /// </summary>
    OrderingFailed,

    /// <summary>
    /// A call of the transaction reached an actor that is being moved to another worker (live migration): it takes no
    /// new transaction until it serves from its new silo. Nothing of the transaction committed; the client side of
    /// Snapper submits it again by itself, within a bound.
    /// </summary>
    ActorMigrating,
}

/// <summary>What an <see cref="AbortReason"/> says about submitting the transaction again.</summary>
public static class AbortReasons
{
    /// <summary>
    /// True for reasons that come from other transactions or from timing (wait-die, lock and participant timeouts,
    /// failed prepares, cascading aborts, hybrid deadlock avoidance, the serializability check, ordering failures): the
    /// same transaction may commit if submitted again, and <see cref="RetryPolicy"/> retries it. False for reasons in
    /// the transaction itself (a user exception, an unawaited call, an invalid call, an undeclared access, a method
    /// that ran past its timeout) or in the silo (a failed log write, which stops every commit until a restart).
    /// </summary>
    public static bool IsTransient(this AbortReason reason) => reason switch
    {
        AbortReason.WaitDie or AbortReason.LockTimeout or AbortReason.PrepareFailed or AbortReason.ParticipantTimeout
            or AbortReason.CascadingAbort or AbortReason.HybridDeadlock or AbortReason.Serializability
            or AbortReason.SerializabilityIncompleteAfterSet or AbortReason.OrderingFailed or AbortReason.ActorMigrating => true,
        _ => false,
    };
}
