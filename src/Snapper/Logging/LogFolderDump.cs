namespace Snapper.Logging;

/// <summary>
/// What a silo's data folder holds, read without changing it: the checkpoints, every record of every log segment in
/// the order each logger wrote them, and where a file is damaged. For operators and for tracing a failure back to the
/// records that were on disk: recovery folds the same files into one state per actor, and this shows the steps.
/// </summary>
/// <remarks>
/// Unlike recovery, reading never cuts a torn tail off the newest segment and never deletes leftovers of a checkpoint
/// that crashed; a bad frame anywhere is reported in <see cref="Damage"/> and ends the reading of that file only. A
/// silo may be running on the folder meanwhile: its newest segment then reads up to what was written so far, a frame
/// being written shows as damage at its end, and a segment or checkpoint it deletes while this reads is left out.
/// </remarks>
/// <param name="Checkpoints">Each checkpoint file, oldest first (a running silo keeps the newest one only).</param>
/// <param name="Records">Every record of the segments, logger by logger, segment by segment, in written order.</param>
/// <param name="Damage">Files, or their tails, that could not be read.</param>
public sealed record LogFolderDump(IReadOnlyList<LogDumpCheckpoint> Checkpoints, IReadOnlyList<LogDumpRecord> Records, IReadOnlyList<LogDumpDamage> Damage)
{
    /// <summary>Reads the checkpoints and log segments of <paramref name="dataFolder"/> (a silo's <c>SnapperOptions.DataFolder</c>).</summary>
    /// <exception cref="DirectoryNotFoundException">The folder does not exist.</exception>
    public static LogFolderDump Read(string dataFolder)
    {
        ArgumentException.ThrowIfNullOrEmpty(dataFolder);
        var folder = Path.GetFullPath(dataFolder);
        if (!Directory.Exists(folder))
        {
            throw new DirectoryNotFoundException($"No data folder at '{folder}'.");
        }

        var damage = new List<LogDumpDamage>();
        var checkpoints = new List<LogDumpCheckpoint>();
        foreach (var file in CheckpointFile.All(folder))
        {
            try
            {
                checkpoints.Add(CheckpointOf(file, CheckpointFile.ReadFile(file)));
            }
            catch (LogCorruptedException corrupted)
            {
                damage.Add(new LogDumpDamage(Path.GetFileName(file), corrupted.Offset, corrupted.Problem));
            }
            catch (FileNotFoundException)
            {
                // A running silo deleted it after writing a newer one, which is listed too.
            }
        }

        var records = new List<LogDumpRecord>();
        foreach (var loggerFolder in Directory.GetDirectories(folder, "logger-*").Order(StringComparer.Ordinal))
        {
            foreach (var segment in Logger.Segments(loggerFolder))
            {
                var name = Path.Combine(Path.GetFileName(loggerFolder), Path.GetFileName(segment));
                var index = 0;
                try
                {
                    // Read as a segment that is not the newest: a torn tail is reported, not cut off.
                    foreach (var record in LogSegmentReader.Read(segment, isLastSegment: false))
                    {
                        records.Add(new LogDumpRecord(name, index++, record.Type.ToString(), record.Kind.ToString(), record.Id,
                            record.Actor, record.Seq, record.State, record.Decider));
                    }
                }
                catch (LogCorruptedException corrupted)
                {
                    damage.Add(new LogDumpDamage(name, corrupted.Offset, corrupted.Problem));
                }
                catch (FileNotFoundException)
                {
                    // A running silo's checkpoint covered it and deleted it after it was listed: its records are in
                    // that checkpoint, which this reading may or may not have listed.
                }
            }
        }

        return new LogFolderDump(checkpoints, records, damage);
    }

    private static LogDumpCheckpoint CheckpointOf(string file, Checkpoint checkpoint) => new(
        Path.GetFileName(file),
        checkpoint.Number,
        checkpoint.Cut,
        [.. checkpoint.Image.Actors.OrderBy(a => a.Key, StringComparer.Ordinal)
            .Select(a => new LogDumpActor(a.Key, a.Value.StateSeq, a.Value.MaxSeq, a.Value.State, a.Value.Incremental))],
        checkpoint.Image.Undecided.Count);
}

/// <summary>
/// One log record. <paramref name="Type"/>: <c>StateWritten</c> or <c>StateChanged</c> (an actor's new state, whole or
/// as key-value changes; it counts only if its transaction or batch committed), <c>Committed</c>,
/// <c>CommittedAwaitingAcks</c>, <c>Acknowledged</c> or <c>Aborted</c> (decisions). <paramref name="Kind"/> says what
/// <paramref name="Id"/> numbers: <c>Act</c> (an ACT's tid), <c>Batch</c> (a PACT batch's bid), <c>RemoteAct</c> (a
/// participant's part of an ACT decided on another silo) or <c>GlobalBatch</c> (a worker's part of a global batch).
/// </summary>
/// <param name="Segment">The segment file, as <c>logger-N/NNNNNNNNNNNN.wal</c> under the data folder.</param>
/// <param name="Index">The record's position in its segment, from 0.</param>
/// <param name="Type">What the record is (see above).</param>
/// <param name="Kind">What its id numbers (see above).</param>
/// <param name="Id">The transaction's tid or the batch's bid.</param>
/// <param name="Actor">For a state record, the actor, as Orleans prints its grain id.</param>
/// <param name="Seq">For a state record, the version's number: an actor's committed state is its committed record of the largest seq.</param>
/// <param name="State">For a state record, the state's bytes (the actor's serialized state, or its key-value changes).</param>
/// <param name="Decider">For a state record decided on another silo, the transaction's first actor.</param>
public sealed record LogDumpRecord(string Segment, int Index, string Type, string Kind, long Id, string? Actor, long Seq, byte[]? State, string? Decider);

/// <summary>A checkpoint: the committed state of every actor logged before its cut, and the first segment of each logger it does not cover.</summary>
/// <param name="File">The checkpoint's file name in the data folder.</param>
/// <param name="Number">Its number (checkpoints are numbered in the order they were taken).</param>
/// <param name="Cut">For each logger folder, the number of the first segment above the checkpoint.</param>
/// <param name="Actors">Every actor's committed state as of the checkpoint.</param>
/// <param name="Undecided">State records whose decision was not yet logged at the cut.</param>
public sealed record LogDumpCheckpoint(string File, long Number, IReadOnlyDictionary<string, long> Cut, IReadOnlyList<LogDumpActor> Actors, int Undecided);

/// <summary>An actor in a checkpoint: its committed state, the seq of that state, and the largest seq it had logged.</summary>
/// <param name="Actor">The actor, as Orleans prints its grain id.</param>
/// <param name="StateSeq">The seq of the committed state.</param>
/// <param name="MaxSeq">The largest seq the actor had logged, committed or not.</param>
/// <param name="State">The state's bytes (null if the actor had no committed state).</param>
/// <param name="Incremental">Whether <paramref name="State"/> is a key-value image rather than the serialized state.</param>
public sealed record LogDumpActor(string Actor, long StateSeq, long MaxSeq, byte[]? State, bool Incremental);

/// <summary>A file of the data folder that could not be read from <paramref name="Offset"/> on.</summary>
/// <param name="File">The file, relative to the data folder.</param>
/// <param name="Offset">Where the bad frame starts.</param>
/// <param name="Problem">What is wrong there.</param>
public sealed record LogDumpDamage(string File, long Offset, string Problem);
