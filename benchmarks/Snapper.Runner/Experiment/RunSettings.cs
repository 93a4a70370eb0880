using Snapper.Workloads;

namespace Snapper.Runner.Experiment;

/// <summary>How long and how hard each (workload point, mode) is run (thesis §3.4.1.3).</summary>
/// <param name="Epochs">Epochs per run, warm-up included.</param>
/// <param name="WarmupEpochs">Leading epochs that are not measured.</param>
/// <param name="EpochLength">Length of one epoch.</param>
/// <param name="Pipelines">Transactions kept in flight per mode; several values are run one after another.</param>
/// <param name="Seed">Seed of the client loops' random sources.</param>
public sealed record RunSettings(
    int Epochs,
    int WarmupEpochs,
    TimeSpan EpochLength,
    IReadOnlyDictionary<BenchmarkMode, int[]> Pipelines,
    int Seed)
{
    public int MeasuredEpochs => Epochs - WarmupEpochs;

    /// <summary>Pipeline sizes used when none is given: tuned so each mode runs near its best here.</summary>
    public static IReadOnlyDictionary<BenchmarkMode, int[]> DefaultPipelines { get; } = new Dictionary<BenchmarkMode, int[]>
    {
        [BenchmarkMode.NT] = [64],
        [BenchmarkMode.ACT] = [4],
        [BenchmarkMode.OrleansTxn] = [1],
        [BenchmarkMode.PACT] = [64],
        [BenchmarkMode.Hybrid] = [16],
    };
}
