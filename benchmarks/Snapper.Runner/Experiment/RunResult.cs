using Snapper.Runner.Cluster;
using Snapper.Workloads;

namespace Snapper.Runner.Experiment;

/// <summary>
/// The measured outcome of one (workload point, mode, pipeline) run, over the measured epochs only; against a cluster
/// folder also what each silo used (<see cref="Usage"/>, empty otherwise).
/// </summary>
public sealed record RunResult(
    string Workload,
    BenchmarkMode Mode,
    IReadOnlyList<KeyValuePair<string, string>> Parameters,
    int Pipeline,
    long Committed,
    long Aborted,
    double CommittedPerSecond,
    double P50Ms,
    double P90Ms,
    double P99Ms,
    IReadOnlyDictionary<string, long> AbortsByReason,
    string? ConsistencyError,
    double LogBytesPerTxn = double.NaN,
    double FsyncsPerTxn = double.NaN,
    IReadOnlyList<SiloUsage>? Usage = null,
    RepeatSpread? Spread = null,
    ProcessCost? Cost = null)
{
    /// <summary>
    /// The mean latency and the 99.9th percentile, printed beside the percentiles: with closed client loops the mean is
    /// the pipeline over the throughput (Little's law), and a mean far above p99 shows that a few transactions waited
    /// very long while the rest ran (an unfair scheduler), which the percentiles alone hide.
    /// </summary>
    public double MeanMs { get; init; } = double.NaN;

    /// <inheritdoc cref="MeanMs"/>
    public double P999Ms { get; init; } = double.NaN;

    public double AbortRate => Committed + Aborted == 0 ? 0 : (double)Aborted / (Committed + Aborted);

    /// <summary>All parameters including the pipeline size, as <c>key=value;key=value</c>.</summary>
    public string ParamsText => string.Join(';', Parameters.Append(new("pipeline", Pipeline.ToString(System.Globalization.CultureInfo.InvariantCulture))).Select(p => $"{p.Key}={p.Value}"));

    /// <summary>The workload parameters without the pipeline size: what identifies a point of a sweep.</summary>
    public string PointText => string.Join(';', Parameters.Select(p => $"{p.Key}={p.Value}"));
}
