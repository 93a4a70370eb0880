using System.Diagnostics;

namespace Snapper.Runner.Experiment;

/// <summary>
/// What the runner's own process spent over the measured epochs, per committed transaction: CPU time, bytes allocated
/// on the managed heap, and the share of wall time the garbage collector paused the process. On the embedded silo the
/// process is the silo and its clients, so these say what a transaction costs, and unlike throughput they barely move
/// with what else runs on the machine (allocation not at all): the numbers to compare before and after a change to a
/// hot path. Against a running cluster they would be the client's alone, so they are not taken there. The collections a
/// second and their mean pause tell a latency tail made of the collector's pauses (a p99 near the mean pause) from one
/// made of queueing.
/// </summary>
public readonly record struct ProcessCost(double CpuUsPerTxn, double AllocatedBytesPerTxn, double GcPausePercent,
    double CollectionsPerSecond = 0, double MeanPauseMs = 0)
{
    /// <summary>A reading of the process's counters, taken where the measured epochs start.</summary>
    public readonly record struct Mark(TimeSpan Cpu, long Allocated, TimeSpan GcPause, int Collections, long At)
    {
        public static Mark Take() => new(
            Process.GetCurrentProcess().TotalProcessorTime,
            GC.GetTotalAllocatedBytes(precise: false),
            GC.GetTotalPauseDuration(),
            GC.CollectionCount(0), // every collection counts generation 0, whichever generation it collected
            Stopwatch.GetTimestamp());

        /// <summary>The cost per transaction from this mark to now, over <paramref name="committed"/> transactions.</summary>
        public ProcessCost Since(long committed)
        {
            var now = Take();
            var per = Math.Max(committed, 1);
            var wall = Stopwatch.GetElapsedTime(At, now.At);
            var paused = (now.GcPause - GcPause).TotalMilliseconds;
            var collections = now.Collections - Collections;
            return new ProcessCost(
                (now.Cpu - Cpu).TotalMicroseconds / per,
                (double)(now.Allocated - Allocated) / per,
                100 * paused / Math.Max(wall.TotalMilliseconds, 1e-9),
                collections / Math.Max(wall.TotalSeconds, 1e-9),
                collections > 0 ? paused / collections : 0);
        }
    }

    public override string ToString() =>
        $"runner process per txn: {CpuUsPerTxn:N1} us CPU, {AllocatedBytesPerTxn / 1024:N2} KB allocated; GC paused {GcPausePercent:N1} % of the time" +
        $" ({CollectionsPerSecond:N1} collections a second, {MeanPauseMs:N2} ms each on average)";
}
