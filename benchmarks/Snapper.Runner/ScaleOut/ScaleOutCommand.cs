using System.Diagnostics;
using System.Globalization;
using Microsoft.Extensions.DependencyInjection;
using Snapper.Runner.Hosting;
using Snapper.Workloads;

namespace Snapper.Runner.ScaleOut;

/// <summary>
/// <c>--scale-out S</c>, the thesis's scale-out experiment (§4.4.6, Fig. 4.17) on a cluster that
/// deploy/cluster-start.sh started with home workers (actors on the first workers only): the modes run together; after S
/// seconds the other workers start (deploy/cluster-start.sh --add), then the actors are spread over all workers with
/// live migrations while the load goes on, and the load runs S seconds more. Writes the per-second throughput
/// (scaleout.csv), each phase's latency percentiles and aborts (phases.csv), the migration times, and a chart.
/// </summary>
public static class ScaleOutCommand
{
    /// <summary>Longest the new silos may take to start, and the load to drain after the last phase.</summary>
    private static readonly TimeSpan StartBound = TimeSpan.FromMinutes(5);

    private const int SeedStride = 100_000;

    /// <summary>Runs the scenario (phases in <see cref="ScaleOutPhase"/>); returns the exit code: 0 when it ran through, the checks passed and nothing failed to move.</summary>
    public static async Task<int> RunAsync(IWorkload workload, IReadOnlyList<BenchmarkMode> modes, int gatewayPort, ScaleOutSettings settings, string outDirectory,
        CancellationToken cancellationToken)
    {
        var script = FindDeployScript("cluster-start.sh");
        var title = $"{workload.Name} {string.Join(' ', workload.Parameters.Concat(modes.SelectMany(workload.ModeParameters)).Select(p => $"{p.Key}={p.Value}"))}, " +
            $"modes {string.Join(", ", modes.Select(m => $"{m} (pipeline {settings.Pipelines[m]})"))}";
        Console.WriteLine($"Snapper scale-out: {title}; {settings.Steady.TotalSeconds:0} s before adding {settings.AddSilos} and {settings.Steady.TotalSeconds:0} s after the rebalance, output {outDirectory}");

        using var host = RunnerHost.Create([], gatewayPort, BenchmarkDurability.InMemory with { Name = "cluster" });
        await host.StartAsync(cancellationToken);
        var grains = host.Services.GetRequiredService<IGrainFactory>();
        var before = await grains.WorkersUpAsync();
        Console.WriteLine($"Workers up: {string.Join(", ", before)}");
        foreach (var mode in modes)
        {
            Console.WriteLine($"Preparing {workload.Name} for {mode} ...");
            await workload.PrepareAsync(grains, mode, cancellationToken);
        }

        var recorder = new ScaleOutRecorder(modes);
        var seconds = new List<ScaleOutSecond>();
        var phaseTimes = new Dictionary<ScaleOutPhase, TimeSpan>();
        var phaseStarted = TimeSpan.Zero;
        var migrated = 0;
        var clock = Stopwatch.StartNew();
        using var stopping = new CancellationTokenSource();
        var loops = modes.SelectMany((mode, m) => Enumerable.Range(0, settings.Pipelines[mode]).Select(i => Task.Run(async () =>
        {
            var loop = recorder.ForLoop(mode);
            var driver = workload.CreateDriver(grains, mode, settings.Seed + m * SeedStride + i, settings.Pipelines[mode]);
            while (!stopping.IsCancellationRequested && !cancellationToken.IsCancellationRequested)
            {
                var started = Stopwatch.GetTimestamp();
                var outcome = await driver.RunOneAsync();
                if (outcome.Committed)
                {
                    loop.Commit(Stopwatch.GetElapsedTime(started).TotalMilliseconds);
                }
                else
                {
                    loop.Abort(outcome.AbortReason ?? "Unknown");
                }
            }
        }, CancellationToken.None))).ToArray();
        var sampler = Task.Run(() => SampleAsync(recorder, clock, () => Volatile.Read(ref migrated), seconds, stopping.Token), CancellationToken.None);

        RebalanceResult? rebalance = null;
        string? failure = null;
        try
        {
            Enter(ScaleOutPhase.Warmup);
            await Task.Delay(settings.Steady / 3, cancellationToken);
            Enter(ScaleOutPhase.Before);
            await Task.Delay(settings.Steady, cancellationToken);

            Enter(ScaleOutPhase.Adding);
            failure = await AddSilosAsync(script, settings, outDirectory, cancellationToken);
            if (failure is null)
            {
                Enter(ScaleOutPhase.Migrating);
                rebalance = await grains.RebalanceAsync(new RebalanceOptions
                {
                    Parallelism = settings.Parallelism,
                    OnMoved = _ => Interlocked.Increment(ref migrated),
                }, cancellationToken);
                Console.WriteLine($"  rebalanced: {rebalance.Moved.Count} of {rebalance.Planned.Count} actors moved, {rebalance.Failed.Count} failed");

                Enter(ScaleOutPhase.After);
                await Task.Delay(settings.Steady, cancellationToken);
            }
        }
        finally
        {
            phaseTimes[recorder.Phase] = clock.Elapsed - phaseStarted;
            await stopping.CancelAsync();
            await Task.WhenAll(loops).WaitAsync(StartBound, CancellationToken.None);
            await sampler;
        }

        var footer = new List<string>();
        var checksFailed = false;
        foreach (var mode in modes)
        {
            var problem = await workload.CheckConsistencyAsync(grains, mode, cancellationToken);
            checksFailed |= problem is not null;
            footer.Add($"Consistency check of {mode}: {problem ?? "ok"}.");
        }

        var after = await grains.WorkersUpAsync();
        var hosted = new List<string>();
        foreach (var worker in after)
        {
            hosted.Add($"worker {worker}: {(await grains.ActorsOnAsync(worker)).Count}");
        }

        footer.Add($"Actors per worker at the end: {string.Join(", ", hosted)}.");
        if (failure is not null)
        {
            footer.Add($"FAILED: {failure}");
        }

        var phases = Enum.GetValues<ScaleOutPhase>().Where(phaseTimes.ContainsKey).Select(phase =>
        {
            var (latencies, aborts) = recorder.Of(phase);
            return new ScaleOutPhaseSummary(phase, phaseTimes[phase], latencies, aborts);
        }).ToArray();
        var output = new ScaleOutOutput(outDirectory, title, modes);
        foreach (var line in output.Write(seconds, phases, rebalance, footer))
        {
            Console.WriteLine(line);
        }

        await host.StopAsync(CancellationToken.None);
        return failure is null && !checksFailed && rebalance is { Failed.Count: 0 } && phases.Sum(p => p.Committed) > 0 ? 0 : 1;

        void Enter(ScaleOutPhase phase)
        {
            if (phase != ScaleOutPhase.Warmup)
            {
                phaseTimes[recorder.Phase] = clock.Elapsed - phaseStarted;
            }

            phaseStarted = clock.Elapsed;
            recorder.Phase = phase;
            Console.WriteLine($"[{clock.Elapsed.TotalSeconds,6:0.0} s] phase {phase}");
        }
    }

    /// <summary>A row every second: what committed and aborted in it, and the migrations done by its end.</summary>
    private static async Task SampleAsync(ScaleOutRecorder recorder, Stopwatch clock, Func<int> migrated, List<ScaleOutSecond> rows, CancellationToken stopping)
    {
        var previous = recorder.Read();
        for (var second = 1; !stopping.IsCancellationRequested; second++)
        {
            var due = TimeSpan.FromSeconds(second) - clock.Elapsed;
            try
            {
                if (due > TimeSpan.Zero)
                {
                    await Task.Delay(due, stopping);
                }
            }
            catch (OperationCanceledException)
            {
                return;
            }

            var now = recorder.Read();
            rows.Add(new ScaleOutSecond(second, recorder.Phase,
                [.. now.Committed.Select((c, i) => c - previous.Committed[i])],
                now.Aborted.Sum() - previous.Aborted.Sum(),
                now.MigrationAborts - previous.MigrationAborts,
                migrated()));
            previous = now;
        }
    }

    /// <summary>Starts the new silos with the deploy script; its output goes to add-silos.log. Returns what failed, or null.</summary>
    private static async Task<string?> AddSilosAsync(string script, ScaleOutSettings settings, string outDirectory, CancellationToken cancellationToken)
    {
        var log = Path.Combine(outDirectory, "add-silos.log");
        var start = new ProcessStartInfo("bash") { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (var argument in new[] { script, "--add", "--silos", settings.AddSilos, "--data", settings.ClusterFolder })
        {
            start.ArgumentList.Add(argument);
        }

        using var process = Process.Start(start) ?? throw new InvalidOperationException($"could not run {script}");
        var stdout = process.StandardOutput.ReadToEndAsync(cancellationToken);
        var stderr = process.StandardError.ReadToEndAsync(cancellationToken);
        using var bound = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        bound.CancelAfter(StartBound);
        try
        {
            await process.WaitForExitAsync(bound.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
        }

        await File.WriteAllTextAsync(log, await stdout + await stderr, CancellationToken.None);
        return process.HasExited && process.ExitCode == 0
            ? null
            : $"{Path.GetFileName(script)} --add --silos {settings.AddSilos} did not start them (see {log})";
    }

    /// <summary>The deploy script, found from the runner's folder up (the runner runs from the repository it was built in).</summary>
    private static string FindDeployScript(string name)
    {
        for (var directory = new DirectoryInfo(AppContext.BaseDirectory); directory is not null; directory = directory.Parent)
        {
            var candidate = Path.Combine(directory.FullName, "deploy", name);
            if (File.Exists(candidate))
            {
                return candidate;
            }
        }

        throw new FileNotFoundException($"deploy/{name} was not found above {AppContext.BaseDirectory}; run the runner from the Snapper repository.");
    }
}

/// <summary>One second of the scenario.</summary>
internal sealed record ScaleOutSecond(int Second, ScaleOutPhase Phase, long[] CommittedByMode, long Aborted, long MigrationAborts, int Migrated)
{
    public long Committed => CommittedByMode.Sum();
}

/// <summary>One phase of the scenario: its length, the latencies of what committed in it (sorted, ms) and its aborts.</summary>
internal sealed record ScaleOutPhaseSummary(ScaleOutPhase Phase, TimeSpan Duration, double[] LatenciesMs, IReadOnlyDictionary<string, long> Aborts)
{
    public long Committed => LatenciesMs.LongLength;

    public long Aborted => Aborts.Values.Sum();

    public long MigrationAborts => Aborts.GetValueOrDefault(ScaleOutRecorder.MigrationAbort);

    public double PerSecond => Committed / Math.Max(Duration.TotalSeconds, 1e-9);

    public double Percentile(double q) => Experiment.ExperimentRunner.Percentile(LatenciesMs, q);

    public string AbortsText => string.Join(' ', Aborts.Select(a => string.Create(CultureInfo.InvariantCulture, $"{a.Key}={a.Value}")));
}
