namespace Snapper.Act;

/// <summary>
/// The 2PC side of a transactional actor (thesis §3.3.3.3): the first actor of an ACT coordinates, every
/// other actor it touched is a participant. Presumed abort: an actor that has no record of a transaction
/// treats it as aborted.
/// </summary>
/// <remarks>
/// A request's <c>MaxBefore</c> is the ACT's max(BeforeSet) (thesis §3.3.4.3), or none: a participant that ends the ACT as
/// committed remembers it, so that later ACTs ordered after this one on the actor inherit its dependencies.
/// <c>ReadUncommitted</c> says whether the ACT read from a batch that had not committed then (its first actor may wait
/// for batches with this participant's lock held). The sender's stamp proves that a silo sent the message
/// (<see cref="Actors.SiloCallKeys"/>); a participant refuses one without it before it touches anything.
/// </remarks>
internal interface IActParticipant : IGrain
{
    /// <summary>Phase one. A participant that only read releases its lock here and takes no part in phase two.</summary>
    Task<PrepareResult> Prepare(ActPhaseRequest request);

    /// <summary>Phase two, commit: installs the transaction's writes and releases its lock. Idempotent.</summary>
    Task Commit(ActPhaseRequest request);

    /// <summary>Abort: discards the transaction's writes and releases its lock. Idempotent.</summary>
    Task Abort(Actors.SiloStamp sender, long tid);

    /// <summary>
    /// Asked of a transaction's first actor by a prepared participant that has waited too long for the
    /// decision. An undecided transaction is decided as aborted by this question.
    /// </summary>
    Task<TxnOutcome> Resolve(Actors.SiloStamp sender, long tid, GrainId participant);
}
