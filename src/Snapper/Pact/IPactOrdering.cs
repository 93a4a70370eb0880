namespace Snapper.Pact;

/// <summary>
/// What a first actor needs from PACT ordering (thesis §3.3.2.1-2): a tid and batch for a submitted PACT, the batch's
/// outcome, and the ways the PACT ends (finished, failed). One silo's <see cref="PactService"/> implements it; a
/// cluster can put a remote implementation behind the same calls.
/// </summary>
internal interface IPactOrdering
{
    /// <summary>Submits a PACT; completes when it has a tid and its batch was delivered to every declared actor.</summary>
    /// <exception cref="TransactionAbortedException">It could not be ordered (<see cref="AbortReason.OrderingFailed"/>, <see cref="AbortReason.LogWriteFailed"/>).</exception>
    Task<PactTicket> SubmitAsync(GrainId root, ActorAccessInfo accessInfo);

    /// <summary>The outcome of the PACT's batch: null if it committed, a <see cref="TransactionAbortedException"/>, or a <see cref="TransactionInDoubtException"/>.</summary>
    Task<SnapperException?> OutcomeAsync(PactTicket ticket);

    /// <summary>
    /// The PACT's first method returned: releases unused declared accesses. Returns the failure that dooms the PACT, or
    /// null: <see cref="AbortReason.UnawaitedCall"/> if a method of it still runs somewhere, <see cref="AbortReason.PrepareFailed"/>
    /// if another worker did not confirm the release within ExecutionTimeout.
    /// </summary>
    ValueTask<TransactionAbortedException?> FinishAsync(PactTicket ticket);

    /// <summary>
    /// Completes when the global batch of a call's PACT is merged into this worker's order (the call may have outrun it);
    /// fails with <see cref="AbortReason.UndeclaredAccess"/> at once if the PACT declared nothing on this worker.
    /// </summary>
    Task WhenGlobalMergedAsync(TxnContext context);

    /// <summary>
    /// The reason a call's refusal should carry: a call of a global PACT whose part this worker already dropped in a
    /// cascading abort finds no declaration here, and is <see cref="AbortReason.CascadingAbort"/>, not an undeclared access.
    /// </summary>
    TransactionAbortedException Explain(TxnContext context, TransactionAbortedException refused);

    /// <summary>
    /// <see cref="AbortReason.CascadingAbort"/> if the PACT of <paramref name="context"/> is global and its part on this worker
    /// was dropped (it aborted; a part commits only after its PACTs' methods returned); null otherwise.
    /// </summary>
    TransactionAbortedException? DroppedHere(TxnContext context);

    /// <summary>The PACT failed: its batch and every later uncommitted one abort.</summary>
    void Abort(PactTicket failed, TransactionAbortedException reason);

    /// <summary>Marks a PACT as failed where its first actor will see it, even if user code caught the failed call.</summary>
    void Doom(TransactionAbortedException reason);

    /// <summary>Takes the mark <see cref="Doom"/> left, if any.</summary>
    TransactionAbortedException? TakeDoom(long tid);
}

/// <summary>What schedules and ACTs need to know of PACT batches: which are resolved, which committed, how far delivery got.</summary>
internal interface IBatchStatus
{
    /// <summary>Every batch with a bid at or below this is committed or aborted.</summary>
    long ResolvedBid { get; }

    /// <summary>Completes with true when batch <paramref name="bid"/> committed, false if it did not.</summary>
    Task<bool> WhenResolvedAsync(long bid);

    /// <summary>
    /// A position that every batch this silo emits from now on comes after (batches emitted before are in their actors'
    /// schedules already): an actor that saw no batch after an ACT when this was at or above the ACT's max(BeforeSet)
    /// can only ever get batches after the ACT that are later still, so its part of the AfterSet cannot fail the check.
    /// </summary>
    Hybrid.BatchPosition EmissionFrontier(Hybrid.BatchPosition atLeast);

    /// <summary>Whether every batch up to <paramref name="position"/> is known to be committed or aborted.</summary>
    bool IsResolved(Hybrid.BatchPosition position);
}

/// <summary>Where an actor's schedule reports a sub-batch it completed (BatchComplete, thesis Fig. 3.7).</summary>
internal interface IBatchCompletionSink
{
    /// <summary>
    /// <paramref name="actor"/> finished its part of batch <paramref name="bid"/>, leaving <paramref name="version"/>
    /// for the log (no state if the sub-batch only read).
    /// </summary>
    void SubBatchCompleted(long bid, GrainId actor, Scheduling.CompletedVersion version);
}
