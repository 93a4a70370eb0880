using System.Runtime.InteropServices;
using System.Text;

namespace Snapper.Logging;

/// <summary>
/// A checkpoint of the write-ahead log: the committed image of everything logged before a cut (every actor's
/// committed state, and the state records whose decision was not yet logged), and the cut itself: for each logger
/// folder, the first segment the checkpoint does not cover. Recovery loads the newest checkpoint and replays only
/// the segments from the cut on, so the segments below it can be deleted.
/// </summary>
internal sealed record Checkpoint(long Number, long MaxId, IReadOnlyDictionary<string, long> Cut, LogImage Image);

/// <summary>
/// Checkpoint files (<c>checkpoint-NNNNNNNNNNNN.ckpt</c> in the data folder): frames as in the segments (length,
/// CRC-32, payload), one per entry: a header, the cut, the actors, the undecided records, and an end marker that
/// counts them. A checkpoint is written to a temporary file, fsynced and renamed, so a crash leaves either the old
/// checkpoint or the new one, never half of one; a damaged checkpoint therefore stops recovery with
/// <see cref="LogCorruptedException"/>.
/// </summary>
internal static class CheckpointFile
{
    // Format 2 adds, to each actor entry, whether its state is a key-value image (RecoveredActor.Incremental); format 1
    // checkpoints (opaque states only) are still read.
    private const int FormatVersion = 2;
    private const string Extension = ".ckpt";

    private enum Entry : byte
    {
        Header = 1,
        Cut = 2,
        Actor = 3,
        Undecided = 4,
        End = 5,
        OpenCommit = 6,
        OpenCommitOfKind = 7,
    }

    public static string PathOf(string folder, long number) => Path.Combine(folder, $"checkpoint-{number:D12}{Extension}");

    /// <summary>Checkpoint files of the folder, oldest first.</summary>
    public static string[] All(string folder) => [.. Directory.GetFiles(folder, "checkpoint-*" + Extension).Order(StringComparer.Ordinal)];

    /// <summary>Writes the checkpoint durably (temporary file, fsync, rename, fsync of the folder).</summary>
    public static void Write(string folder, Checkpoint checkpoint)
    {
        var path = PathOf(folder, checkpoint.Number);
        var temporary = path + ".tmp";
        using (var file = new FileStream(temporary, FileMode.Create, FileAccess.Write, FileShare.None, bufferSize: 1 << 16))
        {
            var entries = 0L;
            void Put(Entry entry, Action<BinaryWriter> body)
            {
                using var payload = new MemoryStream();
                using (var writer = new BinaryWriter(payload, Encoding.UTF8, leaveOpen: true))
                {
                    writer.Write((byte)entry);
                    body(writer);
                }

                LogFrame.Write(file, payload.GetBuffer().AsSpan(0, (int)payload.Length));
                entries++;
            }

            Put(Entry.Header, w => { w.Write(FormatVersion); w.Write(checkpoint.Number); w.Write(checkpoint.MaxId); });
            foreach (var (loggerFolder, segment) in checkpoint.Cut)
            {
                Put(Entry.Cut, w => { w.Write(loggerFolder); w.Write(segment); });
            }

            foreach (var (actor, image) in checkpoint.Image.Actors)
            {
                Put(Entry.Actor, w =>
                {
                    w.Write(actor);
                    w.Write(image.StateSeq);
                    w.Write(image.MaxSeq);
                    w.Write(image.State?.Length ?? -1);
                    w.Write(image.State ?? []);
                    w.Write(image.Incremental);
                });
            }

            foreach (var record in checkpoint.Image.Undecided)
            {
                Put(Entry.Undecided, w => w.Write(record.Encode()));
            }

            foreach (var (kind, id) in checkpoint.Image.OpenCommits)
            {
                Put(Entry.OpenCommitOfKind, w => { w.Write((byte)kind); w.Write(id); });
            }

            var count = entries;
            Put(Entry.End, w => w.Write(count));
            file.Flush(flushToDisk: true);
        }

        File.Move(temporary, path, overwrite: true);
        FlushDirectory(folder);
    }

    /// <summary>The newest checkpoint of the folder, or null if there is none. Leftover temporary files are removed.</summary>
    /// <exception cref="LogCorruptedException">The newest checkpoint is damaged.</exception>
    public static Checkpoint? ReadNewest(string folder)
    {
        foreach (var leftover in Directory.GetFiles(folder, "checkpoint-*" + Extension + ".tmp"))
        {
            File.Delete(leftover);
        }

        return All(folder) is [.., var newest] ? ReadFile(newest) : null;
    }

    /// <summary>The checkpoint in <paramref name="path"/>, read without changing the folder.</summary>
    /// <exception cref="LogCorruptedException">The checkpoint is damaged.</exception>
    public static Checkpoint ReadFile(string path)
    {
        var bytes = File.ReadAllBytes(path);
        var offset = 0;
        long number = -1, maxId = -1, entries = 0;
        var format = 0;
        var cut = new Dictionary<string, long>(StringComparer.Ordinal);
        var actors = new Dictionary<string, RecoveredActor>(StringComparer.Ordinal);
        var openCommits = new HashSet<(LoggedTxnKind, long)>();
        var undecided = new List<LogRecord>();
        while (true)
        {
            if (offset >= bytes.Length)
            {
                throw new LogCorruptedException(path, offset, "the checkpoint ends before its end marker");
            }

            var payload = LogFrame.Next(bytes, offset, out var frameEnd, out var problem);
            if (problem is not null)
            {
                throw new LogCorruptedException(path, offset, problem);
            }

            try
            {
                using var reader = new BinaryReader(new MemoryStream(bytes, offset + LogFrame.HeaderSize, payload.Length), Encoding.UTF8);
                var entry = (Entry)reader.ReadByte();
                if (entries == 0 && entry != Entry.Header)
                {
                    throw new LogCorruptedException(path, offset, "the checkpoint does not start with its header");
                }

                switch (entry)
                {
                    case Entry.Header:
                        format = reader.ReadInt32();
                        if (format is < 1 or > FormatVersion)
                        {
                            throw new LogCorruptedException(path, offset, $"checkpoint format {format} is not one this Snapper reads (1 to {FormatVersion})");
                        }

                        number = reader.ReadInt64();
                        maxId = reader.ReadInt64();
                        break;
                    case Entry.Cut:
                        cut[reader.ReadString()] = reader.ReadInt64();
                        break;
                    case Entry.Actor:
                        var actor = reader.ReadString();
                        var stateSeq = reader.ReadInt64();
                        var maxSeq = reader.ReadInt64();
                        var length = reader.ReadInt32();
                        var state = length < 0 ? null : reader.ReadBytes(length);
                        var incremental = format >= 2 && reader.ReadBoolean();
                        actors[actor] = new RecoveredActor(state, stateSeq, maxSeq, incremental);
                        break;
                    case Entry.Undecided:
                        undecided.Add(LogRecord.Decode(reader.ReadBytes(payload.Length - 1))
                            ?? throw new LogCorruptedException(path, offset, "an undecided record does not parse"));
                        break;
                    case Entry.OpenCommit:
                        // Written before global batches had open commits: always an ACT.
                        openCommits.Add((LoggedTxnKind.Act, reader.ReadInt64()));
                        break;
                    case Entry.OpenCommitOfKind:
                        openCommits.Add(((LoggedTxnKind)reader.ReadByte(), reader.ReadInt64()));
                        break;
                    case Entry.End:
                        if (reader.ReadInt64() != entries)
                        {
                            throw new LogCorruptedException(path, offset, "the end marker counts a different number of entries");
                        }

                        return new Checkpoint(number, maxId, cut, new LogImage(actors, undecided, openCommits));
                    default:
                        throw new LogCorruptedException(path, offset, $"unknown checkpoint entry {(byte)entry}");
                }
            }
            catch (EndOfStreamException)
            {
                throw new LogCorruptedException(path, offset, "a checkpoint entry is shorter than its fields");
            }

            entries++;
            offset = (int)frameEnd;
        }
    }

    /// <summary>
    /// Makes a rename in <paramref name="folder"/> durable. .NET has no API for it, so on Linux the folder is opened
    /// and fsynced through libc; elsewhere the rename is left to the file system.
    /// </summary>
    private static void FlushDirectory(string folder)
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        const int ReadOnly = 0; // O_RDONLY: enough to fsync a directory
        var descriptor = Open(folder, ReadOnly);
        if (descriptor < 0)
        {
            throw new IOException($"Could not open '{folder}' to flush it (errno {Marshal.GetLastPInvokeError()}).");
        }

        try
        {
            if (Fsync(descriptor) != 0)
            {
                throw new IOException($"Could not flush '{folder}' (errno {Marshal.GetLastPInvokeError()}).");
            }
        }
        finally
        {
            _ = Close(descriptor);
        }
    }

    [DllImport("libc", EntryPoint = "open", SetLastError = true)]
    private static extern int Open([MarshalAs(UnmanagedType.LPUTF8Str)] string path, int flags);

    [DllImport("libc", EntryPoint = "fsync", SetLastError = true)]
    private static extern int Fsync(int descriptor);

    [DllImport("libc", EntryPoint = "close", SetLastError = true)]
    private static extern int Close(int descriptor);
}
