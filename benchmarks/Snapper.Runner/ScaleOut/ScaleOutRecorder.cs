using System.Collections.Concurrent;
using Snapper.Workloads;

namespace Snapper.Runner.ScaleOut;

/// <summary>
/// What the client loops of the scenario saw, by phase (for latency percentiles and abort counts) and by second (for the
/// throughput series). A transaction counts in the phase and second in which it ended. Each loop records into its own
/// lists; the per-second counts are shared counters, read by the sampler while loops run.
/// </summary>
internal sealed class ScaleOutRecorder
{
    /// <summary>The abort reason of a transaction that met a moving actor and was not resubmitted in time.</summary>
    public const string MigrationAbort = nameof(AbortReason.ActorMigrating);

    private readonly BenchmarkMode[] _modes;
    private readonly long[] _committed;
    private readonly long[] _aborted;
    private long _migrationAborts;
    private int _phase;
    private readonly ConcurrentBag<Loop> _loops = [];

    public ScaleOutRecorder(IReadOnlyList<BenchmarkMode> modes)
    {
        _modes = [.. modes];
        _committed = new long[_modes.Length];
        _aborted = new long[_modes.Length];
    }

    public ScaleOutPhase Phase
    {
        get => (ScaleOutPhase)Volatile.Read(ref _phase);
        set => Volatile.Write(ref _phase, (int)value);
    }

    /// <summary>A recorder for one client loop of mode <paramref name="mode"/>.</summary>
    public Loop ForLoop(BenchmarkMode mode)
    {
        var loop = new Loop(this, Array.IndexOf(_modes, mode));
        _loops.Add(loop);
        return loop;
    }

    /// <summary>Totals so far: committed and aborted per mode (in the order of the modes given), and aborts by migration.</summary>
    public (long[] Committed, long[] Aborted, long MigrationAborts) Read() =>
        ([.. _committed.Select((_, i) => Interlocked.Read(ref _committed[i]))],
         [.. _aborted.Select((_, i) => Interlocked.Read(ref _aborted[i]))],
         Interlocked.Read(ref _migrationAborts));

    /// <summary>Once the loops stopped: every committed latency (ms) of the phase, sorted, and its aborts by reason.</summary>
    public (double[] LatenciesMs, IReadOnlyDictionary<string, long> Aborts) Of(ScaleOutPhase phase)
    {
        var latencies = _loops.SelectMany(l => l.Latencies[(int)phase]).ToArray();
        Array.Sort(latencies);
        var aborts = new SortedDictionary<string, long>(StringComparer.Ordinal);
        foreach (var (reason, count) in _loops.SelectMany(l => l.Aborts[(int)phase]))
        {
            aborts[reason] = aborts.GetValueOrDefault(reason) + count;
        }

        return (latencies, aborts);
    }

    internal sealed class Loop(ScaleOutRecorder recorder, int mode)
    {
        private static readonly int Phases = Enum.GetValues<ScaleOutPhase>().Length;

        public List<double>[] Latencies { get; } = [.. Enumerable.Range(0, Phases).Select(_ => new List<double>())];

        public Dictionary<string, long>[] Aborts { get; } = [.. Enumerable.Range(0, Phases).Select(_ => new Dictionary<string, long>(StringComparer.Ordinal))];

        public void Commit(double latencyMs)
        {
            Latencies[(int)recorder.Phase].Add(latencyMs);
            Interlocked.Increment(ref recorder._committed[mode]);
        }

        public void Abort(string reason)
        {
            var aborts = Aborts[(int)recorder.Phase];
            aborts[reason] = aborts.GetValueOrDefault(reason) + 1;
            Interlocked.Increment(ref recorder._aborted[mode]);
            if (reason == MigrationAbort)
            {
                Interlocked.Increment(ref recorder._migrationAborts);
            }
        }
    }
}
