using System.Buffers.Binary;
using System.Text;

namespace Snapper.Logging;

/// <summary>
/// What a log record is about, and so who decides it: an ACT (id = tid) or a PACT batch (id = bid) decided in this
/// silo, or, in a cluster, a part decided on another silo, whose state records this silo keeps until it learns the outcome.
/// </summary>
internal enum LoggedTxnKind : byte
{
    Act = 1,
    Batch = 2,

    /// <summary>
    /// An ACT participant's state when the ACT's first actor is on another silo (id = tid): the decision is in that
    /// silo's log, so the participant's silo logs the state before voting and its own commit record before it
    /// acknowledges the commit. A state record of this kind names its first actor (<see cref="LogRecord.Decider"/>).
    /// </summary>
    RemoteAct = 3,

    /// <summary>
    /// A worker's part of a global PACT batch (id = gbid): the decision is the master's commit record; the worker logs
    /// its own commit record for the part before it confirms the commit to the master.
    /// </summary>
    GlobalBatch = 4,
}

/// <summary>The kinds of write-ahead log records (thesis Fig. 3.7 and 3.8).</summary>
internal enum LogRecordType : byte
{
    /// <summary>
    /// An actor's new state, written before the actor votes: an ACT participant's Prepare, a PACT actor's
    /// BatchComplete (or the first actor's state, logged with its CoordCommit). Counts only if the transaction
    /// or batch committed.
    /// </summary>
    StateWritten = 1,

    /// <summary>The decision: an ACT's CoordCommit, a batch's BatchCommit. Nothing else makes a transaction committed (presumed abort).</summary>
    Committed = 2,

    /// <summary>
    /// An ACT's CoordCommit when other actors prepared and must hear the decision: committed, as <see cref="Committed"/>,
    /// and open until an <see cref="Acknowledged"/> record for it, so that the first actor can answer a participant
    /// that asks for the outcome however long after (presumed abort needs the commit remembered until every
    /// participant knows it).
    /// </summary>
    CommittedAwaitingAcks = 3,

    /// <summary>Every participant of an ACT (every worker of a global batch) logged as <see cref="CommittedAwaitingAcks"/> acknowledged the commit.</summary>
    Acknowledged = 4,

    /// <summary>
    /// A part decided on another silo (<see cref="LoggedTxnKind.RemoteAct"/>, <see cref="LoggedTxnKind.GlobalBatch"/>)
    /// aborted: its state records are dropped. Only an optimization for aborts heard in memory (without it the part
    /// stays in doubt and is asked about again after a restart), and the record of an outcome resolved at recovery.
    /// </summary>
    Aborted = 5,

    /// <summary>
    /// As <see cref="StateWritten"/>, for a key-value actor: only the keys (and dependency entries) the transaction or
    /// batch changed, in <see cref="KeyedEntries"/> form (or the whole state, flagged so, when the log holds no earlier
    /// state of the actor to change). Recovery applies an actor's committed changes in seq order onto its image.
    /// Written from segment format 2 on (<see cref="LogSegmentFormat"/>).
    /// </summary>
    StateChanged = 6,
}

/// <summary>An actor's state as a log record carries it: whole (opaque serialized bytes) or as <see cref="KeyedEntries"/> changes.</summary>
internal readonly record struct LoggedState(byte[] Bytes, bool Incremental)
{
    /// <summary>A version of an actor's state for its log record: its changes if it is logged incrementally, else all of it serialized.</summary>
    public static LoggedState Of(object state, Orleans.Serialization.Serializer serializer) => state is IIncrementallyLogged incremental
        ? new(incremental.EncodeForLog(serializer), Incremental: true)
        : new(serializer.SerializeToArray(state), Incremental: false);
}

/// <summary>Whether a state record's bytes are wanted: given the record without them, and the bytes where they lie.</summary>
internal delegate bool StateFilter(LogRecord withoutState, ReadOnlySpan<byte> state);

/// <summary>
/// One record. <see cref="Seq"/> orders an actor's versions: it increases with every version an actor creates, so
/// the committed record with the largest one is the actor's state. <see cref="Decider"/>: for a state record of a
/// <see cref="LoggedTxnKind.RemoteAct"/>, the first actor whose silo holds the decision.
/// </summary>
internal sealed record LogRecord(LogRecordType Type, LoggedTxnKind Kind, long Id, string? Actor = null, long Seq = 0, byte[]? State = null, string? Decider = null)
{
    public static LogRecord StateWritten(LoggedTxnKind kind, long id, GrainId actor, long seq, LoggedState state) =>
        StateWritten(kind, id, actor.ToString(), seq, state);

    /// <summary>As <see cref="StateWritten(LoggedTxnKind, long, GrainId, long, LoggedState)"/>, with the actor's name as its records carry it.</summary>
    public static LogRecord StateWritten(LoggedTxnKind kind, long id, string actor, long seq, LoggedState state) =>
        new(TypeOf(state), kind, id, actor, seq, state.Bytes);

    /// <summary>
    /// The payload of <see cref="StateWritten(LoggedTxnKind, long, string, long, LoggedState)"/>, written straight from its
    /// parts: a PACT batch logs one state per actor it wrote, and the record object, the array to encode it from and a new
    /// name per record would only be garbage on that path.
    /// </summary>
    public static byte[] EncodeState(LoggedTxnKind kind, long id, string actor, long seq, LoggedState state) =>
        Encode(TypeOf(state), kind, id, actor, seq, state.Bytes, decider: null);

    /// <summary>An ACT participant's state whose decision is logged by <paramref name="firstActor"/> on another silo.</summary>
    public static LogRecord RemoteActStateWritten(long tid, GrainId actor, long seq, LoggedState state, GrainId firstActor) =>
        new(TypeOf(state), LoggedTxnKind.RemoteAct, tid, actor.ToString(), seq, state.Bytes, firstActor.ToString());

    /// <summary>A whole (opaque) state.</summary>
    public static LogRecord StateWritten(LoggedTxnKind kind, long id, GrainId actor, long seq, byte[] state) =>
        StateWritten(kind, id, actor, seq, new LoggedState(state, Incremental: false));

    /// <inheritdoc cref="RemoteActStateWritten(long, GrainId, long, LoggedState, GrainId)"/>
    public static LogRecord RemoteActStateWritten(long tid, GrainId actor, long seq, byte[] state, GrainId firstActor) =>
        RemoteActStateWritten(tid, actor, seq, new LoggedState(state, Incremental: false), firstActor);

    private static LogRecordType TypeOf(LoggedState state) => state.Incremental ? LogRecordType.StateChanged : LogRecordType.StateWritten;

    /// <summary>Whether this record carries an actor's state (whole or its changes).</summary>
    public bool IsState => Type is LogRecordType.StateWritten or LogRecordType.StateChanged;

    /// <summary>The state this record carries (for <see cref="IsState"/> records).</summary>
    public LoggedState Logged => new(State!, Type == LogRecordType.StateChanged);

    public static LogRecord Committed(LoggedTxnKind kind, long id) => new(LogRecordType.Committed, kind, id);

    public static LogRecord CommittedAwaitingAcks(LoggedTxnKind kind, long id) => new(LogRecordType.CommittedAwaitingAcks, kind, id);

    public static LogRecord Acknowledged(LoggedTxnKind kind, long id) => new(LogRecordType.Acknowledged, kind, id);

    public static LogRecord Aborted(LoggedTxnKind kind, long id) => new(LogRecordType.Aborted, kind, id);

    /// <summary>Whether this record commits its transaction or batch.</summary>
    public bool IsCommit => Type is LogRecordType.Committed or LogRecordType.CommittedAwaitingAcks;

    /// <summary>Whether this record is decided on another silo, so that recovery must ask there rather than presume it aborted.</summary>
    public bool DecidedElsewhere => Kind is LoggedTxnKind.RemoteAct or LoggedTxnKind.GlobalBatch;

    /// <summary>The payload inside a frame: type, kind, id, then for a state its actor, seq and bytes (and for a remote ACT its decider).</summary>
    public byte[] Encode() => Encode(Type, Kind, Id, Actor, Seq, State, Decider);

    private static byte[] Encode(LogRecordType type, LoggedTxnKind kind, long id, string? actor, long seq, byte[]? state, string? decider)
    {
        // The names are written straight into the payload (a state record is made on every commit; no byte copies of them).
        var isState = type is LogRecordType.StateWritten or LogRecordType.StateChanged;
        var actorLength = actor is null ? 0 : Encoding.UTF8.GetByteCount(actor);
        var hasDecider = isState && kind == LoggedTxnKind.RemoteAct;
        var deciderLength = hasDecider && decider is not null ? Encoding.UTF8.GetByteCount(decider) : 0;
        var length = 1 + 1 + 8 + (isState ? 4 + actorLength + 8 + 4 + state!.Length : 0) + (hasDecider ? 4 + deciderLength : 0);
        var bytes = new byte[length];
        var span = bytes.AsSpan();
        span[0] = (byte)type;
        span[1] = (byte)kind;
        BinaryPrimitives.WriteInt64LittleEndian(span[2..], id);
        if (isState)
        {
            var at = 10;
            BinaryPrimitives.WriteInt32LittleEndian(span[at..], actorLength);
            Encoding.UTF8.GetBytes(actor, span[(at += 4)..]);
            BinaryPrimitives.WriteInt64LittleEndian(span[(at += actorLength)..], seq);
            BinaryPrimitives.WriteInt32LittleEndian(span[(at += 8)..], state!.Length);
            state.CopyTo(span[(at += 4)..]);
            if (hasDecider)
            {
                BinaryPrimitives.WriteInt32LittleEndian(span[(at += state.Length)..], deciderLength);
                Encoding.UTF8.GetBytes(decider, span[(at + 4)..]);
            }
        }

        return bytes;
    }

    /// <summary>
    /// Decodes only the type, kind and id of a payload whose checksum matched (null if they do not parse, or if the
    /// type is not one of segment format <paramref name="format"/>).
    /// </summary>
    public static LogRecord? DecodeHeader(ReadOnlySpan<byte> span, int format = LogSegmentFormat.Current) =>
        span.Length < 10 || !Enum.IsDefined((LogRecordType)span[0]) || !Enum.IsDefined((LoggedTxnKind)span[1])
            || (format < 2 && (LogRecordType)span[0] == LogRecordType.StateChanged)
            ? null
            : new LogRecord((LogRecordType)span[0], (LoggedTxnKind)span[1], BinaryPrimitives.ReadInt64LittleEndian(span[2..]));

    /// <summary>Decodes a payload whose checksum matched; returns null if it does not parse (a bug or a foreign file).</summary>
    public static LogRecord? Decode(ReadOnlySpan<byte> span, int format = LogSegmentFormat.Current) => Decode(span, format, keepState: null);

    /// <summary>
    /// Like <see cref="Decode(ReadOnlySpan{byte}, int)"/>, but a state record's bytes are copied out only if
    /// <paramref name="keepState"/> (given the record without its state, and the state's bytes in place) says so;
    /// otherwise the record comes back with a null <see cref="State"/>. A fold that keeps one state per actor copies
    /// only those instead of every state of the stretch.
    /// </summary>
    public static LogRecord? Decode(ReadOnlySpan<byte> span, int format, StateFilter? keepState)
    {
        if (DecodeHeader(span, format) is not { } header)
        {
            return null;
        }

        var (type, kind, id) = (header.Type, header.Kind, header.Id);
        if (!header.IsState)
        {
            return span.Length == 10 ? header : null;
        }

        var at = 10;
        if (span.Length < at + 4)
        {
            return null;
        }

        var actorLength = BinaryPrimitives.ReadInt32LittleEndian(span[at..]);
        if (actorLength < 0 || span.Length < at + 4 + actorLength + 12)
        {
            return null;
        }

        var actor = Encoding.UTF8.GetString(span.Slice(at + 4, actorLength));
        at += 4 + actorLength;
        var seq = BinaryPrimitives.ReadInt64LittleEndian(span[at..]);
        var stateLength = BinaryPrimitives.ReadInt32LittleEndian(span[(at + 8)..]);
        at += 12;
        if (stateLength < 0 || span.Length < at + stateLength)
        {
            return null;
        }

        var stateBytes = span.Slice(at, stateLength);
        var state = keepState is null || keepState(new LogRecord(type, kind, id, actor, seq), stateBytes) ? stateBytes.ToArray() : null;
        at += stateLength;
        if (kind != LoggedTxnKind.RemoteAct)
        {
            return span.Length == at ? new LogRecord(type, kind, id, actor, seq, state) : null;
        }

        if (span.Length < at + 4)
        {
            return null;
        }

        var deciderLength = BinaryPrimitives.ReadInt32LittleEndian(span[at..]);
        return deciderLength >= 0 && span.Length == at + 4 + deciderLength
            ? new LogRecord(type, kind, id, actor, seq, state, Encoding.UTF8.GetString(span.Slice(at + 4, deciderLength)))
            : null;
    }
}
