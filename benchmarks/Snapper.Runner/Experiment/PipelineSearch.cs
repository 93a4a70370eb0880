using System.Globalization;
using Snapper.Workloads;

namespace Snapper.Runner.Experiment;

/// <summary>
/// <c>--pipeline MODE=auto</c>: the number of transactions in flight that gives a mode its highest committed throughput
/// at a workload point, found by short probes before the measured run.
/// <list type="number">
/// <item>Climb: probes double the pipeline from 1 and stop once <see cref="MissesToStop"/> probes in a row fail to beat
/// the best by <see cref="MinGain"/>, once p99 latency passes <see cref="P99Bound"/> (more in flight past that point only queues), or
/// at <see cref="Largest"/>.</item>
/// <item>Confirm: a probe of a second moves by 10-40 % on this machine, so one probe per pipeline cannot rank pipelines
/// a few tens of percent apart. The <see cref="Finalists"/> best of the climb are probed <see cref="ConfirmRounds"/> more
/// times each, in turns (a slow stretch of the machine then lands on every finalist alike), and each is judged by the
/// median of its probes.</item>
/// <item>Choose: the smallest finalist whose median is within <see cref="NearBest"/> of the highest median. Past the
/// knee more in flight adds queueing, not throughput (each PACT waits behind more batches), so a pipeline a few percent
/// below the best can have a fraction of its p99.</item>
/// </list>
/// With fsync logging the best pipeline of SmallBank PACTs and ACTs differs tenfold (PACT 512, ACT 4-64), so a fixed
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
    /// Probes in a row without <see cref="MinGain"/> that end the climb. Three, not two: with one-second probes two misses
    /// in a row happen by noise alone. Two ended PACT's climb with fsync at Zipf 1.5 at 64 in flight, where PACTs gain
    /// from larger batches up to 128-512.
    /// </summary>
    public const int MissesToStop = 3;

    /// <summary>How many of the climb's best pipelines are probed again.</summary>
    public const int Finalists = 3;

    /// <summary>How many more probes each finalist gets, so that each is judged by the median of three.</summary>
    public const int ConfirmRounds = 2;

    /// <summary>
    /// How far below the highest median a smaller finalist may be and still be chosen. With one probe per pipeline this
    /// was 10 %, the spread of two probes of one pipeline, and it chose the smaller pipeline whenever the probes could not
    /// tell them apart: with fsync at Zipf 0.9 it put Hybrid at 32 in flight, where Hybrid ran 0.65 of PACT, though at
    /// 64-256 it ran 0.95-1.00 of PACT on the same day. A median of three interleaved probes moves less, so the margin is
    /// half that.
    /// </summary>
    public const double NearBest = 0.05;

    /// <summary>A p99 above this ends the climb: the pipeline is past the point where more in flight helps.</summary>
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
            else if (++misses == MissesToStop)
            {
                break;
            }

            if (probe.P99Ms > P99Bound.TotalMilliseconds)
            {
                break;
            }
        }

        var finalists = measured.OrderByDescending(m => m.Value[0]).Take(Finalists).Select(m => m.Key).Order().ToArray();
        for (var round = 0; round < ConfirmRounds; round++)
        {
            foreach (var pipeline in finalists)
            {
                await Probe(pipeline);
            }
        }

        var medians = finalists.ToDictionary(p => p, p => Repetitions.MedianOf(measured[p]));
        var chosen = Choose(medians);
        var highest = medians.MaxBy(m => m.Value).Key;
        progress.Report($"  pipeline search for {mode}: {string.Join(", ", probes)}; medians " +
            string.Join(", ", medians.Select(m => $"{m.Key.ToString(CultureInfo.InvariantCulture)}: {m.Value:N0}/s")) +
            $" -> {chosen.ToString(CultureInfo.InvariantCulture)}" +
            (chosen == highest ? "" : $" (highest {highest.ToString(CultureInfo.InvariantCulture)}; {chosen.ToString(CultureInfo.InvariantCulture)} is within {NearBest:P0} of it)"));
        return chosen;
    }

    /// <summary>The smallest pipeline whose median committed rate is within <see cref="NearBest"/> of the highest median.</summary>
    public static int Choose(IReadOnlyDictionary<int, double> medianPerSecond)
    {
        var best = medianPerSecond.Values.Max();
        return medianPerSecond.Where(m => m.Value >= best * (1 - NearBest)).Min(m => m.Key);
    }
}
