namespace Snapper.Logging;

/// <summary>
/// An actor as recovery found it: its committed state (null if none), the seq of that state, the largest seq it ever
/// logged, and whether the state is a key-value actor's <see cref="KeyedEntries"/> image rather than opaque bytes.
/// </summary>
internal sealed record RecoveredActor(byte[]? State, long StateSeq, long MaxSeq, bool Incremental = false)
{
    public static readonly RecoveredActor None = new(null, -1, -1);

    /// <summary>
    /// The actor after <paramref name="committed"/>, its committed state records: those above <see cref="StateSeq"/>,
    /// in seq order, each a whole state (replacing) or changes (applied to the state before it).
    /// </summary>
    /// <remarks>
    /// Applying changes in seq order is exact because an actor's committed versions form one chain: a version is made
    /// from the newest version before it (batches in bid order, an ACT from the state the batches before it left), it
    /// commits only if that one did (cascading aborts, the hybrid commit rule, ACT writes installed only at commit),
    /// and it gets a larger seq. So the committed records of an actor, sorted by seq, are each a change to the one
    /// before; an uncommitted record between two of them was a version nobody built on.
    /// <para>
    /// A key-level actor's ACTs hold only their keys: their versions form one chain per key, not per actor, and one may
    /// commit (and reach the log) after another of a larger seq that changed other keys. Their records say so
    /// (<see cref="KeyedEntries.KeyOrderedFlag"/>) and apply even below <see cref="StateSeq"/>: the writers of one key
    /// take its lock one after the other, each logging its commit before it lets go, so no record of a larger seq
    /// changed their keys. Such an actor logs a whole state only when no ACT holds keys of it (see
    /// <see cref="Scheduling.StateVersions{TState}"/>).
    /// </para>
    /// </remarks>
    /// <exception cref="SnapperException">A record cannot apply: changes after an opaque state, or changes that do not parse.</exception>
    public RecoveredActor Advance(IEnumerable<LogRecord> committed)
    {
        // Changes ordered per key apply even below the seq so far: they change keys no record of a larger seq changed.
        var newer = committed.Where(r => r.Seq > StateSeq || KeyedEntries.IsKeyOrdered(r)).OrderBy(r => r.Seq).ToList();
        if (newer.Count == 0)
        {
            return this;
        }

        var top = newer[^1];
        var maxSeq = Math.Max(MaxSeq, top.Seq);
        // Everything before the last whole state is replaced by it.
        var lastWhole = newer.FindLastIndex(r => r.Type == LogRecordType.StateWritten || KeyedEntries.IsWhole(r.State));
        if (newer[^1].Type == LogRecordType.StateWritten)
        {
            return new RecoveredActor(top.State, top.Seq, maxSeq);
        }

        var opaqueBase = lastWhole >= 0 ? newer[lastWhole].Type == LogRecordType.StateWritten : State is not null && !Incremental;
        if (opaqueBase)
        {
            throw Unusable(top, "its key-value changes follow an opaque state (did the actor's class change from TransactionalActor to KeyValueActor?)");
        }

        try
        {
            var changes = newer.Skip(Math.Max(lastWhole, 0)).Select(r => r.State!);
            return new RecoveredActor(KeyedEntries.Apply(lastWhole >= 0 ? null : State, changes), Math.Max(StateSeq, top.Seq), maxSeq, Incremental: true);
        }
        catch (FormatException exception)
        {
            throw Unusable(top, exception.Message);
        }
    }

    private static SnapperException Unusable(LogRecord record, string problem) =>
        new($"The write-ahead log's state records of actor {record.Actor} (up to seq {record.Seq}) cannot be applied: {problem}. Recovery stopped so that no wrong state is loaded.");
}
