namespace Snapper.Logging;

/// <summary>
/// The committed image of a stretch of the log: for every actor, the state of its committed record with the
/// largest seq and the largest seq it ever logged; and the state records whose transaction had no decision in the
/// stretch (undecided: either still running when the stretch ended, or aborted, which presumed abort never logs).
/// </summary>
/// <remarks>
/// Recovery folds the newest checkpoint's image with the segments after its cut and treats what is still undecided
/// as aborted. A checkpoint folds the previous checkpoint with the segments below a new cut and keeps the undecided
/// records, because their decision may come after the cut. That is sound because the cut is atomic over all
/// loggers (see <see cref="WriteAheadLog"/>) and a decision is appended after every state record of its transaction:
/// with several loggers each state record is durable before its actor votes, and with one logger the state records
/// are queued ahead of the decision on that same logger (they are durable no later than it). Either way a decision
/// below the cut never belongs to a state record above it.
/// </remarks>
/// <para>
/// <see cref="OpenCommits"/> are ACTs committed with participants that had not all acknowledged the commit by the end
/// of the stretch (and, on a master, global batches not yet confirmed by every worker): their first actor (the master)
/// must still be able to say "committed" when one of them asks.
/// </para>
/// <para>
/// Records decided on another silo (<see cref="LogRecord.DecidedElsewhere"/>) are never presumed aborted: they stay
/// undecided, through every checkpoint, until a commit or abort record for them is logged here (recovery asks the
/// deciding silo and logs its answer), a later committed version of their actor supersedes them, or, for a global
/// part, this worker committed a later global batch (it commits its parts in gbid order, so every earlier part was
/// decided by then).
/// </para>
internal sealed record LogImage(IReadOnlyDictionary<string, RecoveredActor> Actors, IReadOnlyList<LogRecord> Undecided, IReadOnlySet<(LoggedTxnKind Kind, long Id)> OpenCommits)
{
    public static readonly LogImage Empty = new(new Dictionary<string, RecoveredActor>(), [], new HashSet<(LoggedTxnKind, long)>());

    /// <summary>
    /// Folds segments (oldest first per logger, the last of each logger flagged) onto this image. Undecided records
    /// with an id up to <paramref name="abortedUpTo"/> are dropped: recovery presumed them aborted, and every id
    /// handed out since is larger, so no decision for them can ever come.
    /// </summary>
    /// <exception cref="LogCorruptedException">A segment is damaged other than at the torn tail of a logger's last segment.</exception>
    public LogImage Fold(IReadOnlyList<(string File, bool IsLast)> segments, long abortedUpTo, out FoldStatistics statistics)
    {
        // Pass 1: the decisions, and where each actor's whole states are (actor, seq and the first byte of the state,
        // nothing copied). Torn tails are cut here, so pass 2 reads whole files only.
        var wholeStates = new Dictionary<string, List<(LoggedTxnKind Kind, long Id, long Seq)>>(StringComparer.Ordinal);
        bool NoteWholeState(LogRecord record, ReadOnlySpan<byte> state)
        {
            if (record.Type == LogRecordType.StateWritten || KeyedEntries.IsWhole(state))
            {
                if (!wholeStates.TryGetValue(record.Actor!, out var found))
                {
                    wholeStates[record.Actor!] = found = [];
                }

                found.Add((record.Kind, record.Id, record.Seq));
            }

            return false;
        }

        var committed = new HashSet<(LoggedTxnKind, long)>();
        var aborted = new HashSet<(LoggedTxnKind, long)>();
        var openCommits = new HashSet<(LoggedTxnKind, long)>(OpenCommits);
        var acknowledged = new HashSet<(LoggedTxnKind, long)>();
        var maxId = -1L;
        var maxCommittedGbid = -1L;
        var (committedActs, committedBatches) = (0, 0);
        foreach (var (file, isLast) in segments)
        {
            foreach (var record in LogSegmentReader.Read(file, isLast, keepState: NoteWholeState))
            {
                var key = (record.Kind, record.Id);
                maxId = Math.Max(maxId, record.Id);

                if (record.IsCommit && committed.Add(key))
                {
                    _ = record.Kind is LoggedTxnKind.Act or LoggedTxnKind.RemoteAct ? committedActs++ : committedBatches++;
                    if (record.Kind == LoggedTxnKind.GlobalBatch)
                    {
                        maxCommittedGbid = Math.Max(maxCommittedGbid, record.Id);
                    }
                }

                switch (record.Type)
                {
                    case LogRecordType.CommittedAwaitingAcks:
                        openCommits.Add(key);
                        break;
                    case LogRecordType.Acknowledged:
                        acknowledged.Add(key);
                        break;
                    case LogRecordType.Aborted:
                        aborted.Add(key);
                        break;
                }
            }
        }

        // Each actor's newest committed whole state in these segments: pass 2 copies no committed state below it.
        var newestWhole = new Dictionary<string, long>(StringComparer.Ordinal);
        foreach (var (actor, found) in wholeStates)
        {
            foreach (var (kind, id, seq) in found)
            {
                if (committed.Contains((kind, id)) && seq > newestWhole.GetValueOrDefault(actor, long.MinValue))
                {
                    newestWhole[actor] = seq;
                }
            }
        }

        // Pass 2: the states, the undecided ones of this image first (they are older than every segment).
        var actors = new Dictionary<string, RecoveredActor>(Actors, StringComparer.Ordinal);
        var undecided = new List<LogRecord>();
        var committedStates = new Dictionary<string, CommittedStates>(StringComparer.Ordinal);
        var records = 0L;
        void Apply(LogRecord record)
        {
            // A new image of the actor only when its largest seq grows (or it is new): most records of a stretch are
            // newer than everything before them, but a new image per record would be garbage at the log's rate.
            if (!actors.TryGetValue(record.Actor!, out var current))
            {
                current = RecoveredActor.None;
                actors[record.Actor!] = current with { MaxSeq = record.Seq };
            }
            else if (record.Seq > current.MaxSeq)
            {
                actors[record.Actor!] = current with { MaxSeq = record.Seq };
            }

            if (record.State is null)
            {
                // Read without its bytes (see Wanted): aborted, or replaced by a newer committed state.
                return;
            }

            if (committed.Contains((record.Kind, record.Id)))
            {
                if (record.Seq > current.StateSeq || KeyedEntries.IsKeyOrdered(record))
                {
                    if (!committedStates.TryGetValue(record.Actor!, out var states))
                    {
                        committedStates[record.Actor!] = states = new CommittedStates();
                    }

                    states.Add(record);
                }
            }
            else if (!aborted.Contains((record.Kind, record.Id)))
            {
                undecided.Add(record);
            }
        }

        foreach (var record in Undecided)
        {
            Apply(record);
        }

        // Whether pass 2 needs a state record's bytes: not for an aborted one, nor for a committed one below its actor's
        // newest committed whole state (Advance starts from that one), nor one at or below its actor's state in this
        // image (Advance skips it) unless it holds changes ordered per key. Undecided ones are all kept. So the states
        // copied are about one per actor changed, whatever number of versions the stretch logged.
        bool Wanted(LogRecord record, ReadOnlySpan<byte> state)
        {
            var key = (record.Kind, record.Id);
            if (aborted.Contains(key) && !committed.Contains(key))
            {
                return false;
            }

            if (!committed.Contains(key))
            {
                return true;
            }

            var keyOrdered = record.Type == LogRecordType.StateChanged && KeyedEntries.IsKeyOrdered(state);
            return (!actors.TryGetValue(record.Actor!, out var known) || record.Seq > known.StateSeq || keyOrdered)
                && record.Seq >= newestWhole.GetValueOrDefault(record.Actor!, long.MinValue)
                && (!committedStates.TryGetValue(record.Actor!, out var states) || states.Wants(record.Seq));
        }

        foreach (var (file, _) in segments)
        {
            foreach (var record in LogSegmentReader.Read(file, isLastSegment: false, keepState: Wanted))
            {
                records++;
                if (record.IsState)
                {
                    Apply(record);
                }
            }
        }

        // Whole states and key-value changes alike are applied in each actor's seq order (see RecoveredActor.Advance):
        // the records of one actor can sit on two loggers, and records of an earlier image's undecided set come first.
        foreach (var (actor, states) in committedStates)
        {
            actors[actor] = actors[actor].Advance(states.Records);
        }

        // An undecided record below its actor's committed seq can never become the actor's state, whatever its
        // decision turns out to be; dropping it keeps the undecided set as small as the work in flight.
        var stillUndecided = undecided
            .Where(r => (r.Seq > actors[r.Actor!].StateSeq || KeyedEntries.IsKeyOrdered(r)) && (r.Kind switch
            {
                LoggedTxnKind.RemoteAct => true,
                LoggedTxnKind.GlobalBatch => r.Id > maxCommittedGbid,
                _ => r.Id > abortedUpTo,
            }))
            .DistinctBy(r => (r.Actor, r.Seq))
            .ToArray();
        statistics = new FoldStatistics(segments.Count, records, segments.Sum(s => new FileInfo(s.File).Length), committedActs, committedBatches, maxId);
        openCommits.ExceptWith(acknowledged);
        return new LogImage(actors, stillUndecided, openCommits);
    }
}

/// <summary>What one fold read: segments, records and bytes, the decisions among them, and the largest transaction or batch id.</summary>
internal sealed record FoldStatistics(int Segments, long Records, long Bytes, int CommittedActs, int CommittedBatches, long MaxId);

/// <summary>
/// The committed state records of one actor that a fold will hand to <see cref="RecoveredActor.Advance"/>: only the
/// newest whole state seen so far and the records of larger seq. Advance starts from the whole state of the largest
/// seq and skips every record below it (changes ordered per key included), so a record below the newest whole state
/// can be dropped as soon as that state is read; what the fold keeps is then one state per actor plus the changes
/// after it, not every state the stretch of log wrote, whatever order the loggers' records arrive in.
/// </summary>
internal sealed class CommittedStates
{
    private long _newestWholeSeq = long.MinValue;

    public List<LogRecord> Records { get; } = [];

    /// <summary>Whether a committed record of this seq would be kept (none below the newest whole state is).</summary>
    public bool Wants(long seq) => seq >= _newestWholeSeq;

    public void Add(LogRecord record)
    {
        if (!Wants(record.Seq))
        {
            return;
        }

        if (record.Type == LogRecordType.StateWritten || KeyedEntries.IsWhole(record.State))
        {
            _newestWholeSeq = record.Seq;
            Records.RemoveAll(r => r.Seq < record.Seq);
        }

        Records.Add(record);
    }
}
