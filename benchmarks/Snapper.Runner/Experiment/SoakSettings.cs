using Snapper.Workloads;

namespace Snapper.Runner.Experiment;

/// <summary>How long and how hard a soak runs: every mode's client loops at once, for whole minutes, sampled each minute.</summary>
/// <param name="Minutes">Length of the soak; one row is sampled at the end of every minute.</param>
/// <param name="Pipelines">Transactions kept in flight per mode, for the whole soak.</param>
/// <param name="Seed">Seed of the client loops' random sources.</param>
public sealed record SoakSettings(int Minutes, IReadOnlyDictionary<BenchmarkMode, int> Pipelines, int Seed)
{
    /// <summary>Time between two rows.</summary>
    public static TimeSpan SampleInterval { get; } = TimeSpan.FromMinutes(1);
}
