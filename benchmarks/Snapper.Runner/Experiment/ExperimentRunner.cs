using System.Diagnostics;
using Microsoft.Extensions.Logging;
using Snapper.Runner.Cluster;
using Snapper.Workloads;

namespace Snapper.Runner.Experiment;

/// <summary>
/// Runs one workload point in one mode: a fixed pipeline of client loops, each issuing its next
/// transaction as soon as the previous one returns, over epochs of which the first are warm-up
/// (thesis §3.4.1.3). Only committed transactions count toward throughput and latency. Against a cluster folder, a
/// <see cref="UsageProbe"/> measures what each silo used over the measured epochs.
/// </summary>
public sealed class ExperimentRunner(IGrainFactory grains, RunSettings settings, ILogger<ExperimentRunner> logger, UsageProbe? usage = null, bool embedded = false)
{
    /// <summary>Longest the runner waits for in-flight transactions after the last epoch.</summary>
    private static readonly TimeSpan DrainBound = TimeSpan.FromSeconds(60);

    public async Task<RunResult> RunAsync(IWorkload workload, BenchmarkMode mode, int pipeline, IProgress<string> progress, CancellationToken cancellationToken)
    {
        var label = $"{workload.Name} {string.Join(' ', workload.Parameters.Concat(workload.ModeParameters(mode)).Select(p => $"{p.Key}={p.Value}"))} | {mode} pipeline={pipeline}";
        var recorders = Enumerable.Range(0, pipeline).Select(_ => new LoopRecorder(settings.Epochs)).ToArray();
        var epoch = 0;
        var loops = Enumerable.Range(0, pipeline).Select(i => Task.Run(async () =>
        {
            var driver = workload.CreateDriver(grains, mode, settings.Seed + i, pipeline);
            var recorder = recorders[i];
            while (Volatile.Read(ref epoch) < settings.Epochs && !cancellationToken.IsCancellationRequested)
            {
                var started = Stopwatch.GetTimestamp();
                var outcome = await driver.RunOneAsync();
                var at = Volatile.Read(ref epoch);
                if (at >= settings.Epochs)
                {
                    break;
                }

                if (outcome.Committed)
                {
                    recorder.Commit(at, Stopwatch.GetElapsedTime(started).TotalMilliseconds);
                }
                else
                {
                    recorder.Abort(at, outcome.AbortReason ?? "Unknown");
                }
            }
        }, CancellationToken.None)).ToArray();

        var measuredTime = TimeSpan.Zero;
        using var batches = new PactBatchStats();
        using var hybridWaits = new HybridWaitStats();
        using var log = new LogStats();
        UsageProbe.Mark? usageStart = null;
        ProcessCost.Mark? costStart = null;
        for (var e = 0; e < settings.Epochs; e++)
        {
            if (e == settings.WarmupEpochs)
            {
                batches.Record();
                hybridWaits.Record();
                log.Record();
                usageStart = usage?.Start();
                costStart = embedded ? ProcessCost.Mark.Take() : null;
            }

            var clock = Stopwatch.StartNew();
            await Task.Delay(settings.EpochLength, cancellationToken);
            var elapsed = clock.Elapsed;
            Volatile.Write(ref epoch, e + 1);
            var warmup = e < settings.WarmupEpochs;
            if (!warmup)
            {
                measuredTime += elapsed;
            }

            var committed = recorders.Sum(r => r.CommittedIn(e));
            var aborted = recorders.Sum(r => r.AbortedIn(e));
            progress.Report(
                $"{label} | epoch {e + 1}/{settings.Epochs}{(warmup ? " (warm-up)" : "")} | " +
                $"{committed / elapsed.TotalSeconds,10:N0} txn/s | aborts {Rate(aborted, committed),6:P1}");
        }

        IReadOnlyList<SiloUsage> used = usageStart is null ? [] : usage!.Since(usageStart);
        var committedMeasured = recorders.Sum(r => Enumerable.Range(settings.WarmupEpochs, settings.MeasuredEpochs).Sum(r.CommittedIn));
        var (logBytes, fsyncs) = log.PerTransaction(committedMeasured);
        var cost = costStart?.Since(committedMeasured);
        if (cost is { } spent)
        {
            progress.Report($"{label} | {spent}");
        }
        if (batches.Summary() is { } batchSummary)
        {
            progress.Report($"{label} | {batchSummary}");
        }

        if (hybridWaits.Summary() is { } waitSummary)
        {
            progress.Report($"{label} | {waitSummary}");
        }

        var drained = Task.WhenAll(loops);
        if (await Task.WhenAny(drained, Task.Delay(DrainBound, CancellationToken.None)) != drained)
        {
            logger.LogWarning("{Label}: transactions still in flight {Bound} after the last epoch", label, DrainBound);
        }

        return Summarize(workload, mode, pipeline, recorders, measuredTime) with { LogBytesPerTxn = logBytes, FsyncsPerTxn = fsyncs, Usage = used, Cost = cost };
    }

    private RunResult Summarize(IWorkload workload, BenchmarkMode mode, int pipeline, LoopRecorder[] recorders, TimeSpan measuredTime)
    {
        var measured = Enumerable.Range(settings.WarmupEpochs, settings.MeasuredEpochs).ToArray();
        var latencies = recorders.SelectMany(r => measured.SelectMany(r.LatenciesIn)).ToArray();
        Array.Sort(latencies);
        var aborts = new SortedDictionary<string, long>(StringComparer.Ordinal);
        foreach (var (reason, count) in recorders.SelectMany(r => measured.SelectMany(r.AbortsIn)))
        {
            aborts[reason] = aborts.GetValueOrDefault(reason) + count;
        }

        var committed = latencies.LongLength;
        return new RunResult(
            workload.Name,
            mode,
            [.. workload.Parameters, .. workload.ModeParameters(mode)],
            pipeline,
            committed,
            aborts.Values.Sum(),
            committed / Math.Max(measuredTime.TotalSeconds, 1e-9),
            Percentile(latencies, 0.50),
            Percentile(latencies, 0.90),
            Percentile(latencies, 0.99),
            aborts,
            ConsistencyError: null)
        {
            MeanMs = committed == 0 ? double.NaN : latencies.Average(),
            P999Ms = Percentile(latencies, 0.999),
        };
    }

    private static double Rate(long aborted, long committed) => aborted + committed == 0 ? 0 : (double)aborted / (aborted + committed);

    internal static double Percentile(double[] sorted, double q) =>
        sorted.Length == 0 ? double.NaN : sorted[Math.Min(sorted.Length - 1, (int)Math.Ceiling(q * sorted.Length) - 1)];
}
