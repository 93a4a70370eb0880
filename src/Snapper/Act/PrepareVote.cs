namespace Snapper.Act;

/// <summary>A participant's answer to <see cref="IActParticipant.Prepare"/>.</summary>
[GenerateSerializer]
internal enum PrepareVote
{
    /// <summary>The participant wrote and is prepared; it waits for the decision with its lock held.</summary>
    Prepared,

    /// <summary>The participant only read; it released its lock and needs no decision.</summary>
    ReadOnly,

    /// <summary>The participant cannot commit (unknown transaction, failed call, or timed out).</summary>
    No,
}

/// <summary>
/// A participant's vote, with its part of the ACT's AfterSet for the hybrid check (thesis §3.3.4.3) and the batch it
/// read from that had not committed yet, for the commit rule (§3.3.4.4).
/// </summary>
/// <param name="Vote">The vote.</param>
/// <param name="MinAfter">The first PACT batch scheduled after the ACT on this actor, or none if none is yet.</param>
/// <param name="AfterSetComplete">
/// True if that part cannot still change the check's outcome: a batch is scheduled after the ACT here, or every batch
/// this silo emits from now on comes after the ACT's max(BeforeSet) (its emission frontier is past it), or the ACT never
/// used this actor's state.
/// </param>
/// <param name="State">
/// With a write-ahead log, a prepared participant's new state, serialized: the first actor logs it with its commit
/// record (one append, see <c>TransactionalActor</c>), so the participant itself writes nothing before voting.
/// </param>
/// <param name="StateIncremental">Whether <paramref name="State"/> holds only the changes of a key-value actor (see <c>LoggedState</c>).</param>
/// <param name="Seq">The participant's sequence number for <paramref name="State"/> (its place in the actor's commit order).</param>
/// <param name="LoggedOnOwnSilo">
/// The participant is on another silo than the first actor and made its state durable in its own silo's log before
/// voting: the first actor logs only the decision, and tells it "commit" only once that decision is durable (its early
/// lock release is safe only inside one silo's ordered log).
/// </param>
/// <param name="Worker">The participant's worker (0 on an embedded silo).</param>
/// <param name="ReadFromBid">
/// The batch (a bid of <paramref name="Worker"/>) whose state the ACT read here and that had not committed by the vote,
/// or -1: the first actor commits only once it has. One that aborted makes the vote <see cref="PrepareVote.No"/>.
/// </param>
/// <param name="Refusal">
/// With <see cref="PrepareVote.No"/>, why the participant aborted its part when it knows (a batch it read from aborted,
/// a call still running), so the client hears that reason rather than only "a participant voted no"; null otherwise.
/// </param>
/// <param name="RefusalMessage">The participant's account of <paramref name="Refusal"/>.</param>
[GenerateSerializer, Immutable, Alias("snapper.prepare-result")]
internal readonly record struct PrepareResult(
    [property: Id(0)] PrepareVote Vote,
    [property: Id(6)] Hybrid.BatchPosition MinAfter = default,
    [property: Id(2)] bool AfterSetComplete = false,
    [property: Id(3)] byte[]? State = null,
    [property: Id(4)] long Seq = 0,
    [property: Id(5)] bool LoggedOnOwnSilo = false,
    [property: Id(7)] int Worker = 0,
    [property: Id(8)] long ReadFromBid = -1,
    [property: Id(9)] bool StateIncremental = false,
    [property: Id(10)] AbortReason? Refusal = null,
    [property: Id(11)] string? RefusalMessage = null)
{
    /// <summary>A no vote, carrying why the participant aborted its part when <paramref name="why"/> says.</summary>
    public static PrepareResult No(TransactionAbortedException? why = null) => new(PrepareVote.No, Refusal: why?.Reason, RefusalMessage: why?.Message);
}
