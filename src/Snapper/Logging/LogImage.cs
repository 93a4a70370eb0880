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
/// of the stretch: their first actor must still be able to say "committed" when one of them asks.
/// </para>
internal sealed record LogImage(IReadOnlyDictionary<string, RecoveredActor> Actors, IReadOnlyList<LogRecord> Undecided, IReadOnlySet<long> OpenCommits)
{
    public static readonly LogImage Empty = new(new Dictionary<string, RecoveredActor>(), [], new HashSet<long>());

    /// <summary>
    /// Folds segments (oldest first per logger, the last of each logger flagged) onto this image. Undecided records
    /// with an id up to <paramref name="abortedUpTo"/> are dropped: recovery presumed them aborted, and every id
    /// handed out since is larger, so no decision for them can ever come.
    /// </summary>
    /// <exception cref="LogCorruptedException">A segment is damaged other than at the torn tail of a logger's last segment.</exception>
    public LogImage Fold(IReadOnlyList<(string File, bool IsLast)> segments, long abortedUpTo, out FoldStatistics statistics)
    {
        // Pass 1: the decisions, from the record headers alone. Torn tails are cut here, so pass 2 reads whole files only.
        var committedActs = new HashSet<long>();
        var committedBatches = new HashSet<long>();
        var openCommits = new HashSet<long>(OpenCommits);
        var acknowledged = new HashSet<long>();
        var maxId = -1L;
        foreach (var (file, isLast) in segments)
        {
            foreach (var record in LogSegmentReader.Read(file, isLast, headersOnly: true))
            {
                maxId = Math.Max(maxId, record.Id);
                if (record.IsCommit)
                {
                    (record.Kind == LoggedTxnKind.Act ? committedActs : committedBatches).Add(record.Id);
                }

                if (record.Type == LogRecordType.CommittedAwaitingAcks)
                {
                    openCommits.Add(record.Id);
                }
                else if (record.Type == LogRecordType.Acknowledged)
                {
                    acknowledged.Add(record.Id);
                }
            }
        }

        // Pass 2: the states, the undecided ones of this image first (they are older than every segment).
        var actors = new Dictionary<string, RecoveredActor>(Actors, StringComparer.Ordinal);
        var undecided = new List<LogRecord>();
        var records = 0L;
        void Apply(LogRecord record)
        {
            var current = actors.GetValueOrDefault(record.Actor!) ?? new RecoveredActor(null, -1, -1);
            var committed = (record.Kind == LoggedTxnKind.Act ? committedActs : committedBatches).Contains(record.Id);
            if (committed && record.Seq > current.StateSeq)
            {
                actors[record.Actor!] = new RecoveredActor(record.State, record.Seq, Math.Max(current.MaxSeq, record.Seq));
                return;
            }

            actors[record.Actor!] = current with { MaxSeq = Math.Max(current.MaxSeq, record.Seq) };
            if (!committed)
            {
                undecided.Add(record);
            }
        }

        foreach (var record in Undecided)
        {
            Apply(record);
        }

        foreach (var (file, _) in segments)
        {
            foreach (var record in LogSegmentReader.Read(file, isLastSegment: false))
            {
                records++;
                if (record.Type == LogRecordType.StateWritten)
                {
                    Apply(record);
                }
            }
        }

        // An undecided record below its actor's committed seq can never become the actor's state, whatever its
        // decision turns out to be; dropping it keeps the undecided set as small as the work in flight.
        var stillUndecided = undecided
            .Where(r => r.Id > abortedUpTo && r.Seq > actors[r.Actor!].StateSeq)
            .DistinctBy(r => (r.Actor, r.Seq))
            .ToArray();
        statistics = new FoldStatistics(segments.Count, records, segments.Sum(s => new FileInfo(s.File).Length), committedActs.Count, committedBatches.Count, maxId);
        openCommits.ExceptWith(acknowledged);
        return new LogImage(actors, stillUndecided, openCommits);
    }
}

/// <summary>What one fold read: segments, records and bytes, the decisions among them, and the largest transaction or batch id.</summary>
internal sealed record FoldStatistics(int Segments, long Records, long Bytes, int CommittedActs, int CommittedBatches, long MaxId);
