using System.Threading.Channels;
using Microsoft.Extensions.Logging;
using Snapper.Diagnostics;

namespace Snapper.Logging;

/// <summary>
/// One logger (thesis §3.3.1.1): an append-only series of segment files in its own folder, written by one loop.
/// Group commit: every append that arrives while a write is under way joins the next one, so concurrent appends
/// share one write and one fsync. An append completes only after its records are on disk (after the fsync, unless
/// fsync is off for an experiment).
/// </summary>
/// <remarks>
/// Invariants: records of one append are written together and in order, appends in the order they were queued;
/// a segment is only ever appended to, and a new one is started when it passes the segment size or the logger
/// opens (so a recovered segment is never written again). A group is written only after the previous group's
/// fsync returned, so a record on disk after a crash implies every record appended before it on this logger is too
/// (<see cref="WriteAheadLog.AppendInOrderAsync"/> relies on it). After a failed write the logger refuses every
/// later append: a later group must never become durable while an earlier one may not be (and after a failed fsync
/// the page cache cannot be trusted to hold what was written).
/// The loop runs on a thread of its own, not the thread pool: a write and fsync block for as long as the disk takes,
/// and on a small machine two loggers blocking pool threads would starve the grains whose records they wait for
/// (measured: PACT latency doubled, see issue #11's note).
/// <para>
/// Segments are preallocated: once the current segment is half full, a spare file of the full segment size is filled
/// with zeros and fsynced in the background, and the next segment is that file, renamed. Appends then overwrite
/// blocks that already exist, so their fsync flushes data only, without the file-size and block-allocation changes
/// that make the file system commit its journal on every fsync of a growing file (measured on this machine's ext4:
/// a 4.6 KB append plus fsync took 0.42-0.46 ms into a zero-filled file, 0.55-0.89 ms into a growing one). The zeros
/// after the last record read as the end of the segment (<see cref="LogSegmentReader"/>); a record is never empty,
/// so a frame of zeros is never a record. Before the first spare is ready a segment simply grows, as it would without
/// preallocation. The rename is made durable by the first fsync of the renamed file, as journaling file systems
/// (ext4, xfs) commit a file's namespace change with its next fsync.
/// </para>
/// </remarks>
internal sealed class Logger : IAsyncDisposable
{
    private readonly Channel<PendingAppend> _queue = Channel.CreateUnbounded<PendingAppend>(new UnboundedChannelOptions { SingleReader = true });
    private readonly string _folder;
    private readonly bool _fsync;
    private readonly long _segmentBytes;
    private readonly SnapperMetrics _metrics;
    private readonly ILogger _logger;
    private readonly Thread _writer;
    private readonly TaskCompletionSource _stopped = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly CancellationTokenSource _stopping = new();
    private FileStream _segment;
    private long _segmentNumber;
    private long _written;
    private Task<bool>? _spare;
    private Exception? _failed;
    private readonly Hosting.SnapperTestHooks? _hooks;

    // Appends queued and not yet completed, and a signal for those waiting for room (backpressure, see WhenRoomAsync).
    private readonly object _roomLock = new();
    private readonly int _capacity;
    private int _queued;
    private TaskCompletionSource? _room;

    public Logger(string folder, long nextSegmentNumber, bool fsync, long segmentBytes, SnapperMetrics metrics, ILogger logger,
        Hosting.SnapperTestHooks? hooks = null, int capacity = int.MaxValue)
    {
        _hooks = hooks;
        _capacity = capacity;
        _folder = folder;
        _fsync = fsync;
        _segmentBytes = segmentBytes;
        _metrics = metrics;
        _logger = logger;
        _segmentNumber = FirstSegment = nextSegmentNumber;
        File.Delete(SparePath); // possibly half filled by a silo that crashed
        _segment = OpenSegment(_segmentNumber);
        _writer = new Thread(WriteLoop) { IsBackground = true, Name = $"Snapper logger {Path.GetFileName(folder)}" };
        _writer.Start();
    }

    /// <summary>Segment files of a logger folder, oldest first.</summary>
    public static string[] Segments(string folder) =>
        Directory.Exists(folder) ? [.. Directory.GetFiles(folder, "*.wal").Order(StringComparer.Ordinal)] : [];

    public static long NumberOf(string segmentPath) => long.Parse(Path.GetFileNameWithoutExtension(segmentPath));

    private LogWriteRefusedException Refused(Exception failed) =>
        new($"An earlier write of the log in {_folder} failed; nothing more is written until the silo is restarted.", failed);

    /// <summary>The number of the segment the logger started with.</summary>
    public long FirstSegment { get; }

    /// <summary>The spare being filled or ready (null if none is due yet); set before the append that made it due completes.</summary>
    internal Task<bool>? Spare => Volatile.Read(ref _spare);

    /// <summary>The logger's folder.</summary>
    public string Folder => _folder;

    /// <summary>The payloads of records, as <see cref="AppendAsync"/> takes them.</summary>
    public static byte[][] Encode(LogRecord[] records)
    {
        var payloads = new byte[records.Length][];
        for (var i = 0; i < records.Length; i++)
        {
            payloads[i] = records[i].Encode();
        }

        return payloads;
    }

    /// <summary>Appends encoded records (see <see cref="Encode"/>); completes when they are durable.</summary>
    /// <exception cref="LogWriteRefusedException">An earlier write failed: nothing of this is written.</exception>
    public Task AppendAsync(byte[][] payloads) => Queue(new PendingAppend(payloads)).Done!.Task;

    /// <summary>
    /// As <see cref="AppendAsync(byte[][])"/>, but a continuation that may run synchronously (an await with
    /// <c>ConfigureAwait(false)</c>) runs on the logger's thread right after the fsync, instead of waiting its turn on the
    /// thread pool behind the grains' work; an await in a grain is still posted to its grain. For short work on the commit
    /// path only: the logger writes nothing while it runs, and such a continuation must never wait for this logger.
    /// </summary>
    public Task AppendContinuingOnWriterAsync(byte[][] payloads) =>
        Queue(new PendingAppend(payloads, completion: TaskCreationOptions.None)).Done!.Task;

    /// <summary>
    /// Appends encoded records that nobody waits for: what makes them count is a later record on this logger, awaited by
    /// its writer, which cannot be durable unless these are (appends are written in order, each group after the previous
    /// one's fsync). Spares the completion an awaited append carries.
    /// </summary>
    /// <exception cref="LogWriteRefusedException">An earlier write failed: nothing of this is written.</exception>
    public void Append(byte[][] payloads) => Queue(new PendingAppend(payloads, awaited: false));

    private PendingAppend Queue(PendingAppend append)
    {
        if (Volatile.Read(ref _failed) is { } failed)
        {
            throw Refused(failed);
        }

        if (!_queue.Writer.TryWrite(append))
        {
            throw new ObjectDisposedException(nameof(Logger), "The write-ahead log is closed.");
        }

        Interlocked.Increment(ref _queued);
        return append;
    }

    /// <summary>
    /// Completes when fewer appends than the capacity are queued. Appends themselves never wait (they are made inside
    /// commits, and a commit that waited for room behind commits waiting for it could stall); new transactions wait
    /// here before they start, so a disk slower than the load slows the clients down instead of growing the queue.
    /// </summary>
    public Task WhenRoomAsync()
    {
        if (Volatile.Read(ref _queued) < _capacity)
        {
            return Task.CompletedTask;
        }

        lock (_roomLock)
        {
            return Volatile.Read(ref _queued) < _capacity
                ? Task.CompletedTask
                : (_room ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).Task;
        }
    }

    /// <summary>Appends were completed (written or failed): frees their room and wakes the waiters once there is some.</summary>
    private void Released(int appends)
    {
        if (Interlocked.Add(ref _queued, -appends) >= _capacity || Volatile.Read(ref _room) is null)
        {
            return;
        }

        lock (_roomLock)
        {
            _room?.TrySetResult();
            _room = null;
        }
    }

    /// <summary>
    /// Ends the current segment after everything queued before this call and continues in a new one. Returns the
    /// number of the segment now being written: every record queued before the call is in a segment below it.
    /// </summary>
    public Task<long> RotateAsync()
    {
        var rotation = new PendingAppend(null);
        if (!_queue.Writer.TryWrite(rotation))
        {
            throw new ObjectDisposedException(nameof(Logger), "The write-ahead log is closed.");
        }

        return rotation.Done!.Task;
    }

    public async ValueTask DisposeAsync()
    {
        _queue.Writer.TryComplete();
        await _stopped.Task;
        await _segment.DisposeAsync();
        await _stopping.CancelAsync();
        if (_spare is not null)
        {
            await _spare;
        }

        _stopping.Dispose();
    }

    /// <summary>The preallocated file that becomes the next segment; not a segment (not *.wal) until renamed.</summary>
    private string SparePath => Path.Combine(_folder, "spare.segment");

    /// <summary>
    /// Opens segment <paramref name="number"/> (the spare, renamed, if it is ready, else a new empty file) and starts it
    /// with its format header (<see cref="LogSegmentFormat"/>), which reaches the disk with the first records written.
    /// </summary>
    private FileStream OpenSegment(long number)
    {
        var segment = CreateOrRenameSegment(number);
        LogFrame.Write(segment, LogSegmentFormat.Header());
        return segment;
    }

    private FileStream CreateOrRenameSegment(long number)
    {
        var path = Path.Combine(_folder, $"{number:D12}.wal");
        _written = 0;
        if (_spare is { IsCompleted: true } spare)
        {
            _spare = null;
            if (spare.Result)
            {
                try
                {
                    File.Move(SparePath, path);
                    return new FileStream(path, FileMode.Open, FileAccess.Write, FileShare.Read, bufferSize: 1 << 16);
                }
                catch (IOException exception)
                {
                    _logger.LogWarning(exception, "Could not use the preallocated log segment in {Folder}; the next segment will grow as it is written", _folder);
                }
            }
        }

        return new FileStream(path, FileMode.CreateNew, FileAccess.Write, FileShare.Read, bufferSize: 1 << 16);
    }

    /// <summary>
    /// Starts filling the spare once the current segment is half full (a silo that logs little never pays for one).
    /// Without fsync there is nothing for preallocation to save.
    /// </summary>
    private void PrepareSpareIfDue()
    {
        if (_fsync && _spare is null && _written >= _segmentBytes / 2)
        {
            Volatile.Write(ref _spare, Task.Factory.StartNew(FillSpare, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default));
        }
    }

    /// <summary>Writes the spare: zeros up to the segment size, fsynced. False if it could not (the next segment then grows).</summary>
    private bool FillSpare()
    {
        try
        {
            using var spare = new FileStream(SparePath, FileMode.Create, FileAccess.Write, FileShare.None, bufferSize: 1);
            var zeros = new byte[1 << 20];
            for (var filled = 0L; filled < _segmentBytes; filled += zeros.Length)
            {
                _stopping.Token.ThrowIfCancellationRequested();
                spare.Write(zeros, 0, (int)Math.Min(zeros.Length, _segmentBytes - filled));
            }

            spare.Flush(flushToDisk: true);
            return true;
        }
        catch (Exception exception)
        {
            if (exception is not OperationCanceledException)
            {
                _logger.LogWarning(exception, "Could not preallocate the next log segment in {Folder}; it will grow as it is written", _folder);
            }

            try
            {
                File.Delete(SparePath);
            }
            catch (IOException)
            {
                // Deleted at the next start.
            }

            return false;
        }
    }

    private void WriteLoop()
    {
        try
        {
            WriteUntilClosed();
        }
        finally
        {
            _stopped.TrySetResult();
        }
    }

    private void WriteUntilClosed()
    {
        var group = new List<PendingAppend>();
        while (_queue.Reader.WaitToReadAsync().AsTask().GetAwaiter().GetResult())
        {
            group.Clear();
            while (_queue.Reader.TryRead(out var append))
            {
                group.Add(append);
            }

            // Appends queued before a rotation go to the old segment, the ones after it to the new one.
            var from = 0;
            for (var i = 0; i < group.Count; i++)
            {
                if (group[i].Payloads is null)
                {
                    Write(group, from, i);
                    RotateSegment(group[i]);
                    from = i + 1;
                }
            }

            Write(group, from, group.Count);
        }
    }

    /// <summary>Writes appends [from, to) of the group with one flush (and fsync), then completes them.</summary>
    private void Write(List<PendingAppend> group, int from, int to)
    {
        if (from == to)
        {
            return;
        }

        try
        {
            if (_failed is not null)
            {
                throw Refused(_failed);
            }

            var bytes = 0L;
            for (var i = from; i < to; i++)
            {
                foreach (var payload in group[i].Payloads!)
                {
                    LogFrame.Write(_segment, payload);
                    bytes += LogFrame.SizeOf(payload.Length);
                }
            }

            // A group of barriers only (see WriteAheadLog.WhenInOrderDurableAsync) has nothing to write: everything
            // queued before it was fsynced by an earlier group.
            if (bytes > 0)
            {
                if (_hooks?.AfterLogWrite is { } afterWrite)
                {
                    // Fault injection: the group is in the file (the OS has it) but not yet fsynced.
                    _segment.Flush(flushToDisk: false);
                    afterWrite(group.Skip(from).Take(to - from).SelectMany(a => a.Payloads!).ToArray());
                }

                _segment.Flush(flushToDisk: _fsync);
                _metrics.LogFlushed(bytes, _fsync);
                _written += bytes;
                PrepareSpareIfDue();
            }

            for (var i = from; i < to; i++)
            {
                group[i].Done?.TrySetResult(0);
            }

            Released(to - from);

            if (_written >= _segmentBytes)
            {
                _segment.Dispose();
                _segment = OpenSegment(++_segmentNumber);
            }
        }
        catch (Exception exception)
        {
            // The disk failed under us: nothing in this group may be treated as durable.
            if (_failed is null)
            {
                Volatile.Write(ref _failed, exception);
                _logger.LogCritical(exception, "Write-ahead log write failed in {Folder}; it accepts no more writes", _folder);
            }

            for (var i = from; i < to; i++)
            {
                group[i].Done?.TrySetException(exception);
            }

            Released(to - from);
        }
    }

    private void RotateSegment(PendingAppend rotation)
    {
        try
        {
            // An empty segment already starts after everything queued so far.
            if (_written > 0)
            {
                _segment.Dispose();
                _segment = OpenSegment(++_segmentNumber);
            }

            rotation.Done!.TrySetResult(_segmentNumber);
        }
        catch (Exception exception)
        {
            _logger.LogError(exception, "Write-ahead log could not start a new segment in {Folder}", _folder);
            rotation.Done!.TrySetException(exception);
        }
    }

    /// <summary>An append (payloads) or, with null payloads, a rotation.</summary>
    private sealed class PendingAppend(byte[][]? payloads, bool awaited = true,
        TaskCreationOptions completion = TaskCreationOptions.RunContinuationsAsynchronously)
    {
        public byte[][]? Payloads { get; } = payloads;

        /// <summary>
        /// Completes when the append is durable, or with the new segment's number when the rotation is done; null for an
        /// append nobody waits for (<see cref="Append"/>).
        /// </summary>
        public TaskCompletionSource<long>? Done { get; } = awaited ? new(completion) : null;
    }
}
