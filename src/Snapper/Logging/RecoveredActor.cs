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
    /// </remarks>
    /// <exception cref="SnapperException">A record cannot apply: changes after an opaque state, or changes that do not parse.</exception>
    public RecoveredActor Advance(IEnumerable<LogRecord> committed)
    {
        var newer = committed.Where(r => r.Seq > StateSeq).OrderBy(r => r.Seq).ToList();
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
            return new RecoveredActor(KeyedEntries.Apply(lastWhole >= 0 ? null : State, changes), top.Seq, maxSeq, Incremental: true);
        }
        catch (FormatException exception)
        {
            throw Unusable(top, exception.Message);
        }
    }

    private static SnapperException Unusable(LogRecord record, string problem) =>
        new($"The write-ahead log's state records of actor {record.Actor} (up to seq {record.Seq}) cannot be applied: {problem}. Recovery stopped so that no wrong state is loaded.");
}
