namespace Snapper.Actors;

/// <summary>Where a transaction stands on one actor.</summary>
internal enum ActorTxnPhase
{
    /// <summary>Running methods; may still take locks and call other actors.</summary>
    Active,

    /// <summary>First actor only: collecting prepare votes.</summary>
    Preparing,

    /// <summary>Participant only: voted to commit; waits for the decision with its lock held.</summary>
    Prepared,

    /// <summary>Ended: committed or aborted, removed from the actor.</summary>
    Ended,
}

/// <summary>
/// The bookkeeping of one transaction on one actor: its private copy of the state, whether it wrote, the
/// calls it has running, and the participants it learned from its calls (thesis Fig. 3.5, TxnExeInfo).
/// </summary>
internal sealed class ActorTransaction<TState>(TxnContext context, bool isRoot)
    where TState : class
{
    public TxnContext Context { get; } = context;

    public long Tid => Context.Tid;

    /// <summary>True on the transaction's first actor, which coordinates its 2PC.</summary>
    public bool IsRoot { get; } = isRoot;

    public ActorTxnPhase Phase { get; set; } = ActorTxnPhase.Active;

    /// <summary>The transaction's own copy of the actor state, made at its first <c>GetState</c>.</summary>
    public TState? Working { get; set; }

    /// <summary>True once <c>GetState</c> granted <see cref="AccessMode.ReadWrite"/>: the copy is installed at commit.</summary>
    public bool Wrote { get; set; }

    // The sets below are made at their first use: most transactions on most actors never need them (an ACT on an
    // actor-level actor takes no key; a participant that calls nobody learns of no other participant), and every
    // transaction on every actor would otherwise pay for them.
    private HashSet<object>? _lockedKeys;
    private HashSet<object>? _takenKeys;
    private HashSet<GrainId>? _participants;

    /// <summary>Key-level actor: the keys whose locks it holds or asked for (released when it ends here).</summary>
    public HashSet<object> LockedKeys => _lockedKeys ??= new();

    /// <summary>Whether it holds or asked for any key lock here.</summary>
    public bool LockedAnyKey => _lockedKeys is { Count: > 0 };

    /// <summary>Key-level actor: the keys its copy took from the latest state (each once, when first locked).</summary>
    public HashSet<object> TakenKeys => _takenKeys ??= new();

    /// <summary>Key-level actor: it holds the actor whole (its lock for writing), and its copy is the whole state.</summary>
    public bool HoldsWhole { get; set; }

    /// <summary>Whether the actor's schedule let this ACT in (no uncommitted PACT batch); it must leave at the end.</summary>
    public bool Admitted { get; set; }

    /// <summary>
    /// The largest PACT batch this ACT depends on, as far as known here: max(BeforeSet) of thesis §3.3.4.3, gathered
    /// from the actors it used (this one and, through call responses, the ones it called). None for none.
    /// </summary>
    public Hybrid.BatchPosition MaxBefore { get; private set; } = Hybrid.BatchPosition.None;

    /// <summary>
    /// The uncommitted batch whose state this ACT read on this actor (-1: none, or it was committed). Every batch the ACT
    /// read from must commit before it does, and if one aborts so does the ACT (thesis §3.3.4.4): each actor answers for
    /// its own at prepare, where it can look at its own silo's batches (<see cref="Act.ActParticipant{TState}.ReadFromOutcome"/>).
    /// </summary>
    public long ReadFromBid { get; set; } = -1;

    /// <summary>
    /// Whether some actor of this ACT (this one or one it called) read from a batch that had not committed then: its first
    /// actor may then wait for batches before it commits, and whoever waits for this ACT's locks meanwhile must give way.
    /// </summary>
    public bool ReadUncommitted { get; set; }

    /// <summary>Records that the ACT depends on PACT batches up to <paramref name="maxBefore"/>.</summary>
    public void DependsOn(Hybrid.BatchPosition maxBefore) => MaxBefore = Hybrid.BatchPosition.Max(MaxBefore, maxBefore);

    /// <summary>What a library subclass keeps with the transaction on this actor (a key-value actor's view of its state).</summary>
    public object? Scoped { get; set; }

    /// <summary>Methods of this transaction executing on this actor now.</summary>
    public int RunningMethods { get; set; }

    /// <summary><c>CallActor</c> calls made from this actor that have not returned yet.</summary>
    public int OutstandingCalls { get; set; }

    /// <summary>Actors this transaction touched through calls made from here (transitively).</summary>
    public HashSet<GrainId> Participants => _participants ??= new();

    /// <summary>How many actors <see cref="Participants"/> holds, without making the set.</summary>
    public int ParticipantCount => _participants?.Count ?? 0;

    /// <summary>
    /// What a call to this actor reports to its caller (<c>CallResponse.Participants</c>): this actor and every actor the
    /// transaction reached through calls made from here.
    /// </summary>
    public GrainId[] ReachedFrom(GrainId self)
    {
        if (_participants is not { Count: > 0 } reached)
        {
            return [self];
        }

        reached.Add(self);
        return [.. reached];
    }

    /// <summary>First actor only: the append of its commit decision once queued; completes when durable. A participant's Resolve then answers committed.</summary>
    public Task? CommitLogging { get; set; }

    /// <summary>
    /// A participant whose first actor is on another silo logged its prepared state here: its outcome must be logged here
    /// too (<see cref="OutcomeLogging"/>), since this silo's recovery cannot read the decision from its own log.
    /// </summary>
    public bool PreparedHere { get; set; }

    /// <summary>The append of a <see cref="PreparedHere"/> participant's outcome record; its commit is acknowledged once it is durable.</summary>
    public Task? OutcomeLogging { get; set; }

    /// <summary>Set when the transaction can no longer commit; the first failure wins.</summary>
    public TransactionAbortedException? Doomed { get; private set; }

    /// <summary>When the transaction last did something here (<see cref="Environment.TickCount64"/>).</summary>
    public long LastActivity { get; private set; } = Environment.TickCount64;

    /// <summary>
    /// For a participant whose first actor is on another worker: the silo that served that worker when this part began
    /// (see <see cref="SnapperRuntime.FirstActorSilo"/>).
    /// </summary>
    public SiloAddress? FirstActorSilo { get; set; }

    public void Touch() => LastActivity = Environment.TickCount64;

    public void Doom(TransactionAbortedException reason) => Doomed ??= reason;
}
