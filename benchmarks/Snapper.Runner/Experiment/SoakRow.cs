using Snapper.Workloads;

namespace Snapper.Runner.Experiment;

/// <summary>One minute of a soak.</summary>
/// <param name="Minute">1 for the first minute.</param>
/// <param name="Elapsed">Time the row covers (a minute, give or take the previous sample's own time).</param>
/// <param name="Modes">What each mode's client loops saw in this minute.</param>
/// <param name="Silo">The silo's transaction counters and log bytes in this minute, by <see cref="SiloCounters.Key"/>.</param>
/// <param name="Memory">The process's memory at the end of the minute.</param>
/// <param name="Entries">The <c>snapper.entries.*</c> gauges at the end of the minute, by name without the prefix.</param>
public sealed record SoakRow(
    int Minute,
    TimeSpan Elapsed,
    IReadOnlyList<KeyValuePair<BenchmarkMode, ModeTotals>> Modes,
    IReadOnlyDictionary<string, long> Silo,
    MemorySample Memory,
    IReadOnlyDictionary<string, long> Entries)
{
    public long Committed => Modes.Sum(m => m.Value.Committed);

    public long Aborted => Modes.Sum(m => m.Value.Aborted);

    public double CommittedPerSecond => Committed / Math.Max(Elapsed.TotalSeconds, 1e-9);

    /// <summary>Mean latency of the minute's committed transactions over all modes, in milliseconds.</summary>
    public double MeanLatencyMs => Committed == 0 ? double.NaN : Modes.Sum(m => m.Value.CommittedLatency.TotalMilliseconds) / Committed;

    /// <summary>Aborts by reason, summed over the modes, in reason order.</summary>
    public IReadOnlyDictionary<string, long> AbortsByReason =>
        new SortedDictionary<string, long>(
            Modes.SelectMany(m => m.Value.AbortsByReason).GroupBy(a => a.Key).ToDictionary(g => g.Key, g => g.Sum(a => a.Value)),
            StringComparer.Ordinal);
}
