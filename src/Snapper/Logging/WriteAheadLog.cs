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
/// </remarks>
internal sealed class WriteAheadLog(IOptions<SnapperOptions> options, SnapperMetrics metrics, ILogger<WriteAheadLog> logger)
    : ILifecycleParticipant<ISiloLifecycle>, IAsyncDisposable
{
    private readonly SnapperOptions _options = options.Value;
    private readonly object _openLock = new();
    private Dictionary<string, RecoveredActor> _recovered = new();
    private Logger[] _loggers = [];
    private FileStream? _folderLock;

    /// <summary>Whether Snapper logs at all (a data folder is set).</summary>
    public bool Enabled => _options.DataFolder is not null;

    /// <summary>Recovery statistics of the last open, for logs and tests.</summary>
    public RecoveryReport? LastRecovery { get; private set; }

    public void Participate(ISiloLifecycle lifecycle) => lifecycle.Subscribe(
        nameof(WriteAheadLog), ServiceLifecycleStage.ApplicationServices,
        _ => { Open(); return Task.CompletedTask; },
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

            var folder = Path.GetFullPath(_options.DataFolder!);
            Directory.CreateDirectory(folder);
            _folderLock = LockFolder(folder);
            try
            {
                Recover(folder);
                _loggers = Enumerable.Range(0, _options.Loggers).Select(i =>
                {
                    var loggerFolder = Path.Combine(folder, $"logger-{i}");
                    Directory.CreateDirectory(loggerFolder);
                    var next = Logger.Segments(loggerFolder).Select(Logger.NumberOf).DefaultIfEmpty(-1).Max() + 1;
                    return new Logger(loggerFolder, next, _options.LogFsync, _options.LogSegmentBytes, metrics, logger);
                }).ToArray();
            }
            catch
            {
                _folderLock.Dispose();
                _folderLock = null;
                throw;
            }

            if (!_options.LogFsync)
            {
                logger.LogWarning("Write-ahead log in {Folder} runs WITHOUT fsync: committed transactions can be lost in a crash. For experiments only", folder);
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

    /// <summary>Appends records on the actor's logger (chosen by hashing its id); completes when durable.</summary>
    public Task AppendAsync(GrainId actor, params LogRecord[] records) => _loggers[actor.GetUniformHashCode() % (uint)_loggers.Length].AppendAsync(records);

    /// <summary>Appends coordinator records (commit decisions) on a logger chosen by the id; completes when durable.</summary>
    public Task AppendAsync(long id, params LogRecord[] records) => _loggers[(int)((ulong)id % (ulong)_loggers.Length)].AppendAsync(records);

    public async ValueTask DisposeAsync()
    {
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

    /// <summary>Two passes over every segment: the commit decisions first, then the newest committed state of each actor.</summary>
    private void Recover(string folder)
    {
        var started = Stopwatch.GetTimestamp();
        var segments = Directory.GetDirectories(folder, "logger-*")
            .SelectMany(loggerFolder =>
            {
                var files = Logger.Segments(loggerFolder);
                return files.Select((file, i) => (File: file, IsLast: i == files.Length - 1));
            })
            .ToArray();

        var committedActs = new HashSet<long>();
        var committedBatches = new HashSet<long>();
        foreach (var (file, isLast) in segments)
        {
            foreach (var record in LogSegmentReader.Read(file, isLast))
            {
                if (record.Type == LogRecordType.Committed)
                {
                    (record.Kind == LoggedTxnKind.Act ? committedActs : committedBatches).Add(record.Id);
                }
            }
        }

        var recovered = new Dictionary<string, RecoveredActor>();
        var records = 0L;
        foreach (var (file, _) in segments)
        {
            foreach (var record in LogSegmentReader.Read(file, isLastSegment: false))
            {
                records++;
                if (record.Type != LogRecordType.StateWritten)
                {
                    continue;
                }

                var current = recovered.GetValueOrDefault(record.Actor!) ?? new RecoveredActor(null, -1, -1);
                var committed = (record.Kind == LoggedTxnKind.Act ? committedActs : committedBatches).Contains(record.Id);
                recovered[record.Actor!] = committed && record.Seq > current.StateSeq
                    ? new RecoveredActor(record.State, record.Seq, Math.Max(current.MaxSeq, record.Seq))
                    : current with { MaxSeq = Math.Max(current.MaxSeq, record.Seq) };
            }
        }

        _recovered = recovered;
        var bytes = segments.Sum(s => new FileInfo(s.File).Length);
        LastRecovery = new RecoveryReport(segments.Length, records, bytes, recovered.Count(a => a.Value.State is not null),
            committedActs.Count, committedBatches.Count, Stopwatch.GetElapsedTime(started));
        logger.LogInformation("Write-ahead log recovered in {Elapsed:0.0} ms: {Segments} segment(s), {Bytes} bytes, {Records} records, {Actors} actor state(s), {Acts} committed ACT(s), {Batches} committed batch(es)",
            LastRecovery.Elapsed.TotalMilliseconds, segments.Length, bytes, records, LastRecovery.Actors, committedActs.Count, committedBatches.Count);
    }
}

/// <summary>An actor as recovery found it: its committed state (null if none), the seq of that state, and the largest seq it ever logged.</summary>
internal sealed record RecoveredActor(byte[]? State, long StateSeq, long MaxSeq);

/// <summary>What a recovery read and how long it took.</summary>
internal sealed record RecoveryReport(int Segments, long Records, long Bytes, int Actors, int CommittedActs, int CommittedBatches, TimeSpan Elapsed);
