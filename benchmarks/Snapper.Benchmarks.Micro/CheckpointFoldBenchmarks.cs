using BenchmarkDotNet.Attributes;
using Snapper.Logging;

namespace Snapper.Benchmarks.Micro;

/// <summary>
/// What a checkpoint (and recovery) pays to fold a stretch of log: <see cref="Records"/> committed batches, each writing
/// one opaque state of <see cref="StateBytes"/> bytes to one of <see cref="Actors"/> actors in turn, in one segment.
/// The image it yields holds one state per actor; the question is how the cost grows with the bytes logged against the
/// actors changed.
/// </summary>
[MemoryDiagnoser]
public class CheckpointFoldBenchmarks
{
    private string _folder = null!;
    private List<(string File, bool IsLast)> _segments = null!;

    [Params(100, 10_000)]
    public int Actors { get; set; }

    [Params(256, 4096)]
    public int StateBytes { get; set; }

    public int Records => 20_000;

    [GlobalSetup]
    public void Setup()
    {
        _folder = Directory.CreateTempSubdirectory("snapper-fold-").FullName;
        var path = Path.Combine(_folder, "segment-0.log");
        using (var file = File.Create(path))
        {
            LogFrame.Write(file, LogSegmentFormat.Header());
            var state = new byte[StateBytes];
            for (var id = 0; id < Records; id++)
            {
                state[0] = (byte)id;
                var actor = GrainId.Create("actor", (id % Actors).ToString(System.Globalization.CultureInfo.InvariantCulture));
                LogFrame.Write(file, LogRecord.StateWritten(LoggedTxnKind.Batch, id, actor, id, state).Encode());
                LogFrame.Write(file, LogRecord.Committed(LoggedTxnKind.Batch, id).Encode());
            }
        }

        _segments = [(path, false)];
    }

    [GlobalCleanup]
    public void Cleanup() => Directory.Delete(_folder, recursive: true);

    [Benchmark]
    public int Fold() => LogImage.Empty.Fold(_segments, -1, out _).Actors.Count;
}
