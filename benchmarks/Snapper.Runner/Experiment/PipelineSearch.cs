using System.Globalization;
using Snapper.Workloads;

namespace Snapper.Runner.Experiment;

/// <summary>
/// <c>--pipeline MODE=auto</c>: the number of transactions in flight that gives a mode its highest committed throughput
/// at a workload point, found by short probes before the measured run. Probes double the pipeline from 1 and stop once
/// two probes in a row fail to beat the best by <see cref="MinGain"/>, once p99 latency passes <see cref="P99Bound"/>
/// (more in flight past that point only queues), or at <see cref="Largest"/>. A probe of a second moves by 10-40 % on
/// this machine, so the two best pipelines are probed once more. The run then takes the smallest pipeline probed whose
/// throughput is within <see cref="NearBest"/> of the best mean: past the knee more in flight adds queueing, not
/// throughput (each PACT waits behind more batches), so a pipeline a few percent below the best can have a fraction of
/// its p99. With fsync logging the best pipeline of SmallBank PACTs and ACTs differs tenfold (PACT 512, ACT 4-64), so a fixed
/// default misjudges one mode or the other.
/// </summary>
public sealed class PipelineSearch(ExperimentRunner probeRunner)
{
    /// <summary>Marks "search" in a mode's pipeline list.</summary>
    public const int Auto = 0;

    /// <summary>The largest pipeline probed.</summary>
    public const int Largest = 1024;

    /// <summary>Gain over the best so far that counts as throughput still rising.</summary>
    public const double MinGain = 0.05;

    /// <summary>
    /// How far below the best probed throughput a smaller pipeline may be and still be chosen: about the spread of two
    /// probes of the same pipeline here, so the choice among pipelines the probes cannot tell apart goes to the shortest queue.
    /// </summary>
    public const double NearBest = 0.10;

    /// <summary>A p99 above this ends the search: the pipeline is past the point where more in flight helps.</summary>
    public static readonly TimeSpan P99Bound = TimeSpan.FromMilliseconds(250);

    /// <summary>Probe length: one warm-up epoch and one measured, each a fraction of the run's epochs.</summary>
    public static RunSettings ProbeSettings(RunSettings run) => run with
    {
        Epochs = 2,
        WarmupEpochs = 1,
        EpochLength = TimeSpan.FromSeconds(Math.Clamp(run.EpochLength.TotalSeconds / 5, 1, 2)),
    };

    /// <summary>Probes <paramref name="mode"/> at <paramref name="point"/> and returns the best pipeline, reporting each probe.</summary>
    public async Task<int> FindAsync(IWorkload point, BenchmarkMode mode, IProgress<string> progress, CancellationToken cancellationToken)
    {
        var measured = new Dictionary<int, List<double>>();
        var probes = new List<string>();
        async Task<RunResult> Probe(int pipeline)
        {
            var probe = await probeRunner.RunAsync(point, mode, pipeline, new SyncProgress(_ => { }), cancellationToken);
            (measured.TryGetValue(pipeline, out var runs) ? runs : measured[pipeline] = []).Add(probe.CommittedPerSecond);
            probes.Add($"{pipeline}: {probe.CommittedPerSecond:N0}/s p99 {probe.P99Ms:F1} ms");
            return probe;
        }

        var best = (Pipeline: 1, PerSecond: -1.0);
        var misses = 0;
        for (var pipeline = 1; pipeline <= Largest; pipeline *= 2)
        {
            var probe = await Probe(pipeline);
            if (probe.CommittedPerSecond > best.PerSecond * (1 + MinGain))
            {
                best = (pipeline, probe.CommittedPerSecond);
                misses = 0;
            }
            else if (++misses == 2)
            {
                break;
            }

            if (probe.P99Ms > P99Bound.TotalMilliseconds)
            {
                break;
            }
        }

        // The two best once more: one noisy probe should not decide.
        var finalists = measured.OrderByDescending(m => m.Value[0]).Take(2).Select(m => m.Key).ToArray();
        foreach (var pipeline in finalists)
        {
            await Probe(pipeline);
        }

        var chosen = Choose(measured.ToDictionary(m => m.Key, m => m.Value.Average()));
        var highest = measured.MaxBy(m => m.Value.Average()).Key;
        progress.Report($"  pipeline search for {mode}: {string.Join(", ", probes)} -> {chosen.ToString(CultureInfo.InvariantCulture)}" +
            (chosen == highest ? "" : $" (highest {highest.ToString(CultureInfo.InvariantCulture)}; {chosen.ToString(CultureInfo.InvariantCulture)} is within {NearBest:P0} of it)"));
        return chosen;
    }

    /// <summary>The smallest pipeline whose mean committed rate is within <see cref="NearBest"/> of the highest mean.</summary>
    public static int Choose(IReadOnlyDictionary<int, double> meanPerSecond)
    {
        var best = meanPerSecond.Values.Max();
        return meanPerSecond.Where(m => m.Value >= best * (1 - NearBest)).Min(m => m.Key);
    }
}
