using System.Diagnostics;
using Microsoft.Extensions.Logging;
using Snapper.Workloads;

namespace Snapper.Runner.Experiment;

/// <summary>
/// Runs one workload point in several modes at once, continuously, for whole minutes, and reports a
/// <see cref="SoakRow"/> at the end of every minute: transactions, the process's memory and the silo's
/// <c>snapper.entries.*</c> gauges. What a soak asks is whether memory and the silo's maps stay flat under a
/// long load, so it has no warm-up and no epochs: every minute is a row, and the reader sees the warm-up.
/// </summary>
public sealed class SoakRunner(IGrainFactory grains, SoakSettings settings, EntryGauges gauges, ILogger<SoakRunner> logger)
{
    /// <summary>Longest the runner waits for in-flight transactions after the last minute.</summary>
    private static readonly TimeSpan DrainBound = TimeSpan.FromSeconds(60);

    /// <summary>
    /// Seed distance between the loops of two modes: modes that share actors (TPC-C's ACT and PACT) must not issue
    /// the same sequence of transactions in lockstep.
    /// </summary>
    private const int SeedStride = 100_000;

    public async Task RunAsync(IWorkload workload, IReadOnlyList<BenchmarkMode> modes, Action<SoakRow> report, CancellationToken cancellationToken)
    {
        var counters = modes.Select(mode => KeyValuePair.Create(mode, new ModeCounters())).ToArray();
        using var silo = new SiloCounters();
        var memory = new MemoryProbe();
        using var stopping = new CancellationTokenSource();
        var loops = counters.SelectMany((entry, m) => Enumerable.Range(0, settings.Pipelines[entry.Key]).Select(i => Task.Run(async () =>
        {
            var driver = workload.CreateDriver(grains, entry.Key, settings.Seed + m * SeedStride + i, settings.Pipelines[entry.Key]);
            while (!stopping.IsCancellationRequested && !cancellationToken.IsCancellationRequested)
            {
                var started = Stopwatch.GetTimestamp();
                var outcome = await driver.RunOneAsync();
                if (outcome.Committed)
                {
                    entry.Value.Commit(Stopwatch.GetElapsedTime(started));
                }
                else
                {
                    entry.Value.Abort(outcome.AbortReason ?? "Unknown");
                }
            }
        }, CancellationToken.None))).ToArray();

        var clock = Stopwatch.StartNew();
        var previousAt = TimeSpan.Zero;
        var previous = counters.Select(c => ModeTotals.Zero).ToArray();
        var previousSilo = silo.Read();
        try
        {
            for (var minute = 1; minute <= settings.Minutes; minute++)
            {
                // Due times are fixed from the start, so the time a sample takes does not push later rows back.
                var due = SoakSettings.SampleInterval * minute - clock.Elapsed;
                if (due > TimeSpan.Zero)
                {
                    await Task.Delay(due, cancellationToken);
                }

                var at = clock.Elapsed;
                var totals = counters.Select(c => c.Value.Read()).ToArray();
                var siloTotals = silo.Read();
                var row = new SoakRow(
                    minute,
                    at - previousAt,
                    counters.Select((c, k) => KeyValuePair.Create(c.Key, totals[k].Since(previous[k]))).ToArray(),
                    siloTotals.ToDictionary(t => t.Key, t => t.Value - previousSilo.GetValueOrDefault(t.Key), StringComparer.Ordinal),
                    memory.Sample(),
                    gauges.Read());
                (previous, previousSilo, previousAt) = (totals, siloTotals, at);
                report(row);
            }
        }
        finally
        {
            await stopping.CancelAsync();
            var drained = Task.WhenAll(loops);
            if (await Task.WhenAny(drained, Task.Delay(DrainBound, CancellationToken.None)) != drained)
            {
                logger.LogWarning("Soak of {Workload}: transactions still in flight {Bound} after the last minute", workload.Name, DrainBound);
            }
        }
    }
}
