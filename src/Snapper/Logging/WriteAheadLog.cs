using System.Diagnostics;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Snapper.Diagnostics;
using Snapper.Hosting;

namespace Snapper.Logging;

/// <summary>
/// The write-ahead log of a silo (thesis §3.3.2.4, §3.3.3.3): <see cref="SnapperOptions.Loggers"/> loggers under
/// <see cref="SnapperOptions.DataFolder"/>, shared by the silo's actors and coordinators, and the recovery that
/// reads them back when the silo starts, before any actor activates.
/// </summary>
/// <remarks>
/// Recovery rule (presumed abort, for ACTs and batches alike): a transaction or batch is committed if and only if
/// its <see cref="LogRecordType.Committed"/> record is in the log. Clients hear "committed" only after that record
/// is durable, so everything a client saw committed is recovered, and anything without the record was never
/// reported committed to anyone and is dropped. An actor comes back with the state of its committed record with
/// the largest seq. Records are appended before the message that depends on them is sent.
/// <para>
/// Commit records all go to one logger, whose appends reach the disk in order (<see cref="AppendInOrderAsync"/>).
/// That lets a decided transaction release its actors before its record is durable: whatever then reads its writes
/// commits through a record appended after it, which a crash cannot keep while losing the earlier one. With one
/// logger the state records go there too, queued before the decision, so a commit waits for one fsync, not two.
/// </para>
/// <para>
/// Checkpoints (every <see cref="SnapperOptions.CheckpointInterval"/>) keep recovery and disk bounded: every logger
/// starts a new segment at one cut, the previous checkpoint and the segments below the cut are folded into a new
/// checkpoint (<see cref="LogImage"/>), and then those segments are deleted. The cut is atomic over the loggers:
/// appends and the cut's rotations are queued under one lock, so every append is below the cut on its logger or
/// above it, in one global order. Recovery ends with a checkpoint too, which drops the records recovery presumed
/// aborted for good (every id handed out after recovery exceeds theirs, see <see cref="MaxId"/>).
/// </para>
/// </remarks>
internal sealed class WriteAheadLog(IOptions<SnapperOptions> options, SnapperMetrics metrics, ILogger<WriteAheadLog> logger, SnapperTestHooks? testHooks = null)
    : ILifecycleParticipant<ISiloLifecycle>, IAsyncDisposable
{
    // ACTs committed with participants that have not all acknowledged (see LogRecordType.CommittedAwaitingAcks), and on
    // a master global batches not yet confirmed by every worker: what a first actor (the master) answers from when a
    // participant (a worker) asks for an outcome it no longer remembers. Loaded by recovery.
    private readonly System.Collections.Concurrent.ConcurrentDictionary<(LoggedTxnKind Kind, long Id), byte> _openCommits = CreateOpenCommits(metrics);

    private static System.Collections.Concurrent.ConcurrentDictionary<(LoggedTxnKind, long), byte> CreateOpenCommits(SnapperMetrics metrics)
    {
        var open = new System.Collections.Concurrent.ConcurrentDictionary<(LoggedTxnKind, long), byte>();
        metrics.ObserveEntries("log.open_commits", "Commits (ACTs, global batches) not yet acknowledged by every participant.", () => open.Count);
        return open;
    }

    // State records recovery found decided on another silo and still undecided, by actor (under _openLock). Such an
    // actor does not activate before they are resolved (InDoubtResolver), since its recovered state depends on them.
    private readonly Dictionary<string, List<LogRecord>> _inDoubt = new(StringComparer.Ordinal);
    private readonly Dictionary<string, TaskCompletionSource> _settled = new(StringComparer.Ordinal);

    // Outcomes other silos gave for records in doubt (under _openLock), kept until every record before them is decided too.
    private readonly Dictionary<(LoggedTxnKind Kind, long Id), bool> _inDoubtOutcomes = new();

    private readonly SnapperOptions _options = options.Value;
    private readonly object _openLock = new();

    /// <summary>Orders appends against the rotations of a checkpoint's cut.</summary>
    private readonly object _cutGate = new();
    private readonly SemaphoreSlim _checkpointGate = new(1, 1);
    private Dictionary<string, RecoveredActor> _recovered = new(StringComparer.Ordinal);
    private Logger[] _loggers = [];
    private FileStream? _folderLock;
    private string _folder = "";
    private Checkpoint? _lastCheckpoint;
    private CancellationTokenSource? _stopCheckpoints;
    private Task _checkpointLoop = Task.CompletedTask;

    /// <summary>Whether Snapper logs at all (a data folder is set).</summary>
    public bool Enabled => _options.DataFolder is not null;

    /// <summary>Recovery statistics of the last open, for logs and tests.</summary>
    public RecoveryReport? LastRecovery { get; private set; }

    /// <summary>The largest transaction or batch id recovery found in the log (-1 if none): new ids must exceed it.</summary>
    public long MaxId { get; private set; } = -1;

    /// <summary>Whether checkpoints are taken (logging on and a non-zero interval).</summary>
    private bool Checkpointing => Enabled && _options.CheckpointInterval > TimeSpan.Zero;

    public void Participate(ISiloLifecycle lifecycle) => lifecycle.Subscribe(
        nameof(WriteAheadLog), ServiceLifecycleStage.ApplicationServices,
        async _ =>
        {
            Open();
            if (Checkpointing)
            {
                // Recovery ends with a checkpoint, then they run on the interval.
                await CheckpointAsync();
                _stopCheckpoints = new CancellationTokenSource();
                _checkpointLoop = Task.Run(() => CheckpointLoopAsync(_stopCheckpoints.Token));
            }
        },
        async _ => await DisposeAsync());

    /// <summary>Locks the data folder, recovers what the log holds, and starts the loggers. Does nothing if logging is off.</summary>
    /// <exception cref="SnapperException">Another live silo holds the data folder.</exception>
    /// <exception cref="LogCorruptedException">A segment is damaged other than at its torn tail.</exception>
    public void Open()
    {
        lock (_openLock)
        {
            if (!Enabled || _folderLock is not null)
            {
                return;
            }

            _folder = Path.GetFullPath(_options.DataFolder!);
            Directory.CreateDirectory(_folder);
            _folderLock = LockFolder(_folder);
            try
            {
                var (cut, recovered) = Recover();
                _loggers = Enumerable.Range(0, _options.Loggers).Select(i =>
                {
                    var name = $"logger-{i}";
                    var loggerFolder = Path.Combine(_folder, name);
                    Directory.CreateDirectory(loggerFolder);

                    // Never below the cut: a segment numbered under it would be skipped by the next recovery.
                    var next = Math.Max(Logger.Segments(loggerFolder).Select(Logger.NumberOf).DefaultIfEmpty(-1).Max() + 1, cut.GetValueOrDefault(name));
                    return new Logger(loggerFolder, next, _options.LogFsync, _options.LogSegmentBytes, metrics, logger, testHooks, _options.LogQueueCapacity);
                }).ToArray();

                // What recovery folded is the base of the first checkpoint, so that it reads only what is logged from
                // now on: everything before the loggers' first segments, with nothing undecided (all of it aborted).
                // Records decided on another silo stay: they are in doubt, not aborted, until that silo answers.
                _lastCheckpoint = recovered with
                {
                    Cut = _loggers.ToDictionary(l => Path.GetFileName(l.Folder), l => l.FirstSegment, StringComparer.Ordinal),
                    Image = recovered.Image with { Undecided = [.. recovered.Image.Undecided.Where(r => r.DecidedElsewhere)] },
                };
            }
            catch
            {
                _folderLock.Dispose();
                _folderLock = null;
                throw;
            }

            if (!_options.LogFsync)
            {
                logger.LogWarning("Write-ahead log in {Folder} runs WITHOUT fsync: committed transactions can be lost in a crash. For experiments only", _folder);
            }
        }
    }

    /// <summary>What recovery found for <paramref name="actor"/>: its committed state (null if none) and the largest seq it ever logged.</summary>
    public RecoveredActor? Recovered(GrainId actor)
    {
        lock (_openLock)
        {
            return _recovered.GetValueOrDefault(actor.ToString());
        }
    }

    /// <summary>The state records recovery found decided on another silo and not yet resolved (a snapshot).</summary>
    public IReadOnlyList<LogRecord> InDoubt
    {
        get
        {
            lock (_openLock)
            {
                return [.. _inDoubt.Values.SelectMany(r => r).Where(r => !_inDoubtOutcomes.ContainsKey((r.Kind, r.Id)))];
            }
        }
    }

    /// <summary>Whether recovery left <paramref name="actor"/>'s state depending on an outcome decided on another silo.</summary>
    public bool IsInDoubt(GrainId actor)
    {
        lock (_openLock)
        {
            return _inDoubt.Count > 0 && _inDoubt.ContainsKey(actor.ToString());
        }
    }

    /// <summary>Completes when nothing of <paramref name="actor"/>'s recovered state is in doubt any more.</summary>
    public Task WhenSettledAsync(GrainId actor)
    {
        lock (_openLock)
        {
            var key = actor.ToString();
            if (!_inDoubt.ContainsKey(key))
            {
                return Task.CompletedTask;
            }

            if (!_settled.TryGetValue(key, out var settled))
            {
                _settled[key] = settled = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            }

            return settled.Task;
        }
    }

    /// <summary>
    /// Records the outcome another silo gave for a part recovery found in doubt: a commit or abort record, durable before
    /// the part's state records count (or stop counting) for their actors; then actors with nothing left in doubt settle.
    /// </summary>
    public async Task ResolveInDoubtAsync(LoggedTxnKind kind, long id, bool committed)
    {
        await AppendInOrderAsync(committed ? LogRecord.Committed(kind, id) : LogRecord.Aborted(kind, id));
        var settled = new List<TaskCompletionSource>();
        lock (_openLock)
        {
            _inDoubtOutcomes[(kind, id)] = committed;
            foreach (var (actor, records) in _inDoubt.ToArray())
            {
                // An actor's records apply in seq order (key-value changes need the state before them, see
                // RecoveredActor.Advance): a decided record waits behind an undecided one of a smaller seq.
                records.Sort((a, b) => a.Seq.CompareTo(b.Seq));
                var decided = records.TakeWhile(r => _inDoubtOutcomes.ContainsKey((r.Kind, r.Id))).ToList();
                if (decided.Count > 0)
                {
                    records.RemoveRange(0, decided.Count);
                    var current = _recovered.GetValueOrDefault(actor) ?? RecoveredActor.None;
                    _recovered[actor] = current.Advance(decided.Where(r => _inDoubtOutcomes[(r.Kind, r.Id)]));
                }

                if (records.Count == 0)
                {
                    _inDoubt.Remove(actor);
                    if (_settled.Remove(actor, out var waiter))
                    {
                        settled.Add(waiter);
                    }
                }
            }
        }

        foreach (var waiter in settled)
        {
            waiter.TrySetResult();
        }
    }

    /// <summary>
    /// Appends an ACT's commit (the writers' states and the decision) on the ordered logger; completes when durable. With
    /// <paramref name="awaitingAcks"/> the commit stays open, in memory and in the log, until <see cref="Acknowledged(long)"/>.
    /// </summary>
    public Task AppendCommitAsync(long tid, bool awaitingAcks, LogRecord[] records) => AppendCommitAsync(LoggedTxnKind.Act, tid, awaitingAcks, records);

    /// <inheritdoc cref="AppendCommitAsync(long, bool, LogRecord[])"/>
    public Task AppendCommitAsync(LoggedTxnKind kind, long id, bool awaitingAcks, LogRecord[] records)
    {
        if (awaitingAcks)
        {
            _openCommits[(kind, id)] = 0;
        }

        try
        {
            return AppendInOrderAsync(records);
        }
        catch
        {
            _openCommits.TryRemove((kind, id), out _);
            throw;
        }
    }

    /// <summary>
    /// Every participant of ACT <paramref name="tid"/> acknowledged its commit: it is closed. The record is not awaited;
    /// if it is lost in a crash, the commit is merely remembered longer.
    /// </summary>
    public void Acknowledged(long tid) => Acknowledged(LoggedTxnKind.Act, tid);

    /// <inheritdoc cref="Acknowledged(long)"/>
    public void Acknowledged(LoggedTxnKind kind, long id)
    {
        if (!_openCommits.TryRemove((kind, id), out _))
        {
            return;
        }

        AppendWithoutWaiting(LogRecord.Acknowledged(kind, id));
    }

    /// <summary>
    /// Appends a record nobody waits for (an acknowledgement, an abort of a part decided elsewhere): losing it in a crash
    /// only makes recovery remember or ask longer.
    /// </summary>
    public void AppendWithoutWaiting(LogRecord record)
    {
        try
        {
            _ = AppendInOrderAsync(record).ContinueWith(static t => _ = t.Exception, TaskContinuationOptions.OnlyOnFaulted);
        }
        catch (Exception exception)
        {
            logger.LogDebug(exception, "{Type} record of {Kind} {Id} not logged", record.Type, record.Kind, record.Id);
        }
    }

    /// <summary>
    /// Completes when every logger has room for more appends (<see cref="SnapperOptions.LogQueueCapacity"/>); a
    /// transaction waits here before it starts. Completed at once without a log.
    /// </summary>
    public Task WhenRoomAsync()
    {
        var loggers = _loggers;
        return loggers.Length switch
        {
            0 => Task.CompletedTask,
            1 => loggers[0].WhenRoomAsync(),
            _ => Task.WhenAll(loggers.Select(l => l.WhenRoomAsync())),
        };
    }

    /// <summary>Whether ACT <paramref name="tid"/> committed and some participant has not acknowledged it (false without a log).</summary>
    public bool IsUnacknowledgedCommit(long tid) => _openCommits.ContainsKey((LoggedTxnKind.Act, tid));

    /// <summary>Whether <paramref name="id"/> committed and some participant has not acknowledged it (false without a log).</summary>
    public bool IsUnacknowledgedCommit(LoggedTxnKind kind, long id) => _openCommits.ContainsKey((kind, id));

    /// <summary>Open commits (for tests and the soak report).</summary>
    public int OpenCommitCount => _openCommits.Count;

    /// <summary>Appends records on the actor's logger (chosen by hashing its id); completes when durable.</summary>
    public Task AppendAsync(GrainId actor, params LogRecord[] records) => Append(actor.GetUniformHashCode() % (uint)_loggers.Length, records);

    /// <summary>
    /// True with more than one logger: an actor's state record then goes to the actor's own logger and must be durable
    /// before the actor votes (the thesis's scheme: two fsyncs in sequence on every commit, one for the states, one for
    /// the decision). With one logger (the default) a state record only has to be queued before the commit record
    /// that decides it, on the same ordered logger (<see cref="AppendInOrderAsync"/>): one fsync per commit.
    /// </summary>
    public bool StatesDurableBeforeVote => _loggers.Length > 1;

    /// <summary>
    /// Appends an actor's state record ahead of the decision on it: to the actor's logger if
    /// <see cref="StatesDurableBeforeVote"/> (await the task before voting), else to the ordered logger (queued is
    /// enough: the decision's record is appended after it on the same logger).
    /// </summary>
    public Task AppendStateAsync(GrainId actor, LogRecord record) =>
        StatesDurableBeforeVote ? AppendAsync(actor, record) : AppendInOrderAsync(record);

    /// <summary>
    /// Appends batch commit records, always on the first logger; completes when durable. One logger writes its
    /// appends in order, each group only after the previous one's fsync, so a commit record that survives a crash
    /// implies every commit record appended before it survived too: callers may append the next batches' records
    /// before the previous ones are durable and still never leave a later batch committed without an earlier one.
    /// </summary>
    public Task AppendInOrderAsync(params LogRecord[] records) => Append(0, records);

    /// <summary>
    /// As <see cref="AppendInOrderAsync"/>, for batch commit records: the batches' commit runs on the logger's thread
    /// as soon as the records are durable (<see cref="Logger.AppendContinuingOnWriterAsync"/>).
    /// </summary>
    public Task AppendCommitsInOrderAsync(LogRecord[] records) => Append(0, records, continueOnWriter: true);

    /// <summary>
    /// Queues a state record (<see cref="LogRecord.StateWritten(LoggedTxnKind, long, string, long, LoggedState)"/>) on the
    /// ordered logger without a completion to wait for: the record only has to be ahead of the awaited commit record that
    /// decides it (<see cref="StatesDurableBeforeVote"/> false), whose durability implies its own
    /// (<see cref="AppendInOrderAsync"/>).
    /// </summary>
    /// <exception cref="LogWriteRefusedException">An earlier write failed: nothing of this is written.</exception>
    public void QueueStateInOrder(LoggedTxnKind kind, long id, string actor, long seq, LoggedState state)
    {
        byte[][] payloads = [LogRecord.EncodeState(kind, id, actor, seq, state)];
        lock (_cutGate)
        {
            _loggers[0].Append(payloads);
        }
    }

    /// <summary>
    /// Completes when everything appended in order so far is durable, without writing anything itself (no fsync of
    /// its own). A read-only transaction waits for it before its client hears "committed": it may have read writes
    /// of a transaction released before its commit record was durable.
    /// </summary>
    public Task WhenInOrderDurableAsync() => Append(0, []);

    /// <summary>
    /// Takes a checkpoint now: cuts the log, folds everything below the cut into a new checkpoint file, and deletes
    /// the segments and checkpoints it replaces. Runs one at a time; the silo keeps logging meanwhile.
    /// </summary>
    public async Task<CheckpointReport> CheckpointAsync()
    {
        await _checkpointGate.WaitAsync();
        try
        {
            var started = Stopwatch.GetTimestamp();
            var cut = await CutAsync();
            var previous = _lastCheckpoint;
            var below = Segments(from: previous?.Cut, to: cut);
            var (folded, statistics) = await Task.Run(() =>
            {
                var image = (previous?.Image ?? LogImage.Empty).Fold(below, MaxId, out var read);
                return (image, read);
            });
            var checkpoint = new Checkpoint((previous?.Number ?? -1) + 1, Math.Max(previous?.MaxId ?? -1, statistics.MaxId), cut, folded);
            CheckpointFile.Write(_folder, checkpoint);
            _lastCheckpoint = checkpoint;

            // Only now is everything below the cut in a durable checkpoint (including what recovery read).
            foreach (var (file, _) in Segments(from: null, to: cut))
            {
                File.Delete(file);
            }

            foreach (var older in CheckpointFile.All(_folder).Where(f => f != CheckpointFile.PathOf(_folder, checkpoint.Number)))
            {
                File.Delete(older);
            }

            var report = new CheckpointReport(checkpoint.Number, folded.Actors.Count, folded.Undecided.Count, below.Count,
                statistics.Bytes, new FileInfo(CheckpointFile.PathOf(_folder, checkpoint.Number)).Length, Stopwatch.GetElapsedTime(started));
            logger.LogInformation("Checkpoint {Number} in {Elapsed:0.0} ms: {Actors} actor(s), {Undecided} undecided record(s), {Bytes} checkpoint bytes; deleted {Segments} segment(s) of {SegmentBytes} bytes",
                report.Number, report.Elapsed.TotalMilliseconds, report.Actors, report.Undecided, report.CheckpointBytes, report.SegmentsDeleted, report.SegmentBytesDeleted);
            metrics.Checkpointed(report.Elapsed);
            return report;
        }
        finally
        {
            _checkpointGate.Release();
        }
    }

    private Task Append(ulong logger, LogRecord[] records, bool continueOnWriter = false)
    {
        var payloads = Logger.Encode(records);
        lock (_cutGate)
        {
            return continueOnWriter ? _loggers[logger].AppendContinuingOnWriterAsync(payloads) : _loggers[logger].AppendAsync(payloads);
        }
    }

    /// <summary>Starts a new segment on every logger at one point of the append order; returns each logger folder's first segment above the cut.</summary>
    private async Task<Dictionary<string, long>> CutAsync()
    {
        Task<long>[] rotations;
        lock (_cutGate)
        {
            rotations = _loggers.Select(l => l.RotateAsync()).ToArray();
        }

        var firstAbove = await Task.WhenAll(rotations);
        return _loggers.Select((l, i) => (Path.GetFileName(l.Folder), firstAbove[i])).ToDictionary(c => c.Item1, c => c.Item2, StringComparer.Ordinal);
    }

    /// <summary>
    /// The segments from one cut (inclusive; null: from the start) to another (exclusive), oldest first per logger.
    /// A logger folder the upper cut does not name (the silo now runs fewer loggers) is entirely below it: nothing
    /// appends there any more.
    /// </summary>
    private List<(string File, bool IsLast)> Segments(IReadOnlyDictionary<string, long>? from, IReadOnlyDictionary<string, long> to) =>
        Directory.GetDirectories(_folder, "logger-*")
            .SelectMany(loggerFolder =>
            {
                var name = Path.GetFileName(loggerFolder);
                var first = from?.GetValueOrDefault(name) ?? 0;
                var firstAbove = to.TryGetValue(name, out var number) ? number : long.MaxValue;
                var files = Logger.Segments(loggerFolder).Where(f => Logger.NumberOf(f) >= first && Logger.NumberOf(f) < firstAbove).ToArray();
                return files.Select((file, i) => (file, i == files.Length - 1));
            })
            .ToList();

    private async Task CheckpointLoopAsync(CancellationToken stopping)
    {
        using var timer = new PeriodicTimer(_options.CheckpointInterval);
        try
        {
            while (await timer.WaitForNextTickAsync(stopping))
            {
                try
                {
                    await CheckpointAsync();
                }
                catch (Exception exception) when (exception is not OperationCanceledException)
                {
                    // Nothing is lost: the segments stay until a later checkpoint covers them.
                    logger.LogError(exception, "Checkpoint of the write-ahead log in {Folder} failed; the log keeps growing until one succeeds", _folder);
                }
            }
        }
        catch (OperationCanceledException)
        {
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (_stopCheckpoints is { } stop)
        {
            await stop.CancelAsync();
            await _checkpointLoop;
            stop.Dispose();
            _stopCheckpoints = null;
        }

        Logger[] loggers;
        lock (_openLock)
        {
            loggers = _loggers;
            _loggers = [];
        }

        foreach (var each in loggers)
        {
            await each.DisposeAsync();
        }

        lock (_openLock)
        {
            _folderLock?.Dispose();
            _folderLock = null;
        }
    }

    private static FileStream LockFolder(string folder)
    {
        var path = Path.Combine(folder, "snapper.lock");
        try
        {
            // FileShare.None is an exclusive lock on the file for as long as this silo runs (an advisory lock on Unix).
            return new FileStream(path, FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.None);
        }
        catch (IOException exception)
        {
            throw new SnapperException($"The data folder '{folder}' is in use by another silo ({path} is locked). Each silo needs its own data folder.", exception);
        }
    }

    /// <summary>
    /// Loads the newest checkpoint and folds the segments above its cut onto it; what is then still undecided was
    /// aborted. Segments below the cut are leftovers of a checkpoint that crashed while deleting them: they are
    /// covered, and removed. Returns the cut, below which no new segment may be numbered, and what was recovered as
    /// a checkpoint (not yet on disk).
    /// </summary>
    private (IReadOnlyDictionary<string, long> Cut, Checkpoint Recovered) Recover()
    {
        var started = Stopwatch.GetTimestamp();
        var checkpoint = CheckpointFile.ReadNewest(_folder);
        var cut = checkpoint?.Cut ?? new Dictionary<string, long>();
        var segments = new List<(string File, bool IsLast)>();
        foreach (var loggerFolder in Directory.GetDirectories(_folder, "logger-*"))
        {
            var firstAbove = cut.GetValueOrDefault(Path.GetFileName(loggerFolder), 0);
            var files = Logger.Segments(loggerFolder);
            foreach (var covered in files.Where(f => Logger.NumberOf(f) < firstAbove))
            {
                File.Delete(covered);
            }

            var above = files.Where(f => Logger.NumberOf(f) >= firstAbove).ToArray();
            segments.AddRange(above.Select((file, i) => (file, i == above.Length - 1)));
        }

        var image = (checkpoint?.Image ?? LogImage.Empty).Fold(segments, abortedUpTo: -1, out var statistics);
        _recovered = new Dictionary<string, RecoveredActor>(image.Actors, StringComparer.Ordinal);
        foreach (var open in image.OpenCommits)
        {
            _openCommits[open] = 0;
        }

        foreach (var record in image.Undecided.Where(r => r.DecidedElsewhere))
        {
            if (!_inDoubt.TryGetValue(record.Actor!, out var records))
            {
                _inDoubt[record.Actor!] = records = [];
            }

            records.Add(record);
        }
        MaxId = Math.Max(checkpoint?.MaxId ?? -1, statistics.MaxId);
        LastRecovery = new RecoveryReport(checkpoint?.Number, segments.Count, statistics.Records, statistics.Bytes,
            image.Actors.Count(a => a.Value.State is not null), statistics.CommittedActs, statistics.CommittedBatches,
            image.Undecided.Count(r => !r.DecidedElsewhere), image.Undecided.Count(r => r.DecidedElsewhere),
            Stopwatch.GetElapsedTime(started));
        metrics.Recovered(LastRecovery.Elapsed, statistics.Bytes + (checkpoint is null ? 0 : new FileInfo(CheckpointFile.PathOf(_folder, checkpoint.Number)).Length));
        logger.LogInformation("Write-ahead log recovered in {Elapsed:0.0} ms: checkpoint {Checkpoint}, {Segments} segment(s), {Bytes} bytes, {Records} records, {Actors} actor state(s), {Acts} committed ACT(s), {Batches} committed batch(es), {Aborted} state record(s) of aborted or unfinished transactions dropped, {InDoubt} in doubt until another silo answers",
            LastRecovery.Elapsed.TotalMilliseconds, checkpoint?.Number.ToString() ?? "none", segments.Count, statistics.Bytes, statistics.Records, LastRecovery.Actors,
            statistics.CommittedActs, statistics.CommittedBatches, LastRecovery.Dropped, LastRecovery.InDoubt);
        return (cut, new Checkpoint(checkpoint?.Number ?? -1, MaxId, cut, image));
    }
}


/// <summary>What a recovery read and how long it took.</summary>
internal sealed record RecoveryReport(long? Checkpoint, int Segments, long Records, long Bytes, int Actors, int CommittedActs, int CommittedBatches, int Dropped, int InDoubt, TimeSpan Elapsed);

/// <summary>What a checkpoint wrote and deleted, and how long it took.</summary>
internal sealed record CheckpointReport(long Number, int Actors, int Undecided, int SegmentsDeleted, long SegmentBytesDeleted, long CheckpointBytes, TimeSpan Elapsed);
