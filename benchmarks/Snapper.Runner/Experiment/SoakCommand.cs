using System.Globalization;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Snapper.Runner.Hosting;
using Snapper.Runner.Output;
using Snapper.Workloads;

namespace Snapper.Runner.Experiment;

/// <summary>
/// <c>--minutes N</c>: a soak on a fresh embedded silo. Prepares every mode, runs them together for N minutes
/// (<see cref="SoakRunner"/>), then checks each mode's consistency as a normal run does, reads the gauges once more
/// after the load stopped, and for a logged setting restarts a silo on the data folder (<c>restart.txt</c>).
/// </summary>
public static class SoakCommand
{
    /// <summary>Runs the soak; returns the process exit code: 0 when every check passed and transactions committed.</summary>
    public static async Task<int> RunAsync(
        IWorkload workload, IReadOnlyList<BenchmarkMode> modes, BenchmarkDurability durability, SoakSettings settings, string outDirectory,
        CancellationToken cancellationToken)
    {
        foreach (var mode in modes.Where(m => !workload.Modes.Contains(m)))
        {
            throw new ArgumentException($"{workload.Name} has no {mode} mode.");
        }

        if (durability.DataFolder is { } fresh && Directory.Exists(fresh))
        {
            Directory.Delete(fresh, recursive: true);
        }

        if (durability is { DataFolder: not null, Fsync: false })
        {
            Console.WriteLine($"WARNING: log={durability.Name} does not fsync: a crash can lose acknowledged transactions. Experiments only.");
        }

        var point = string.Join(' ', workload.Parameters.Concat(modes.SelectMany(workload.ModeParameters)).Select(p => $"{p.Key}={p.Value}"));
        var pipelines = string.Join(' ', modes.Select(m => $"{m}={settings.Pipelines[m]}"));
        var title = $"{workload.Name} {point}, modes {string.Join(", ", modes)} together (pipeline {pipelines}), log={durability.Name}, {settings.Minutes} min";
        Console.WriteLine($"Snapper soak: {title}, output {outDirectory}");
        var output = new SoakOutput(outDirectory, title);
        var footer = new List<string>();
        long committed = 0;
        var failed = false;

        using var gauges = new EntryGauges();
        using (var host = RunnerHost.Create([], clusterGatewayPort: null, durability))
        {
            await host.StartAsync(cancellationToken);
            var grains = host.Services.GetRequiredService<IGrainFactory>();
            foreach (var mode in modes)
            {
                Console.WriteLine($"Preparing {workload.Name} for {mode} (log={durability.Name}) ...");
                await workload.PrepareAsync(grains, mode, cancellationToken);
            }

            var runner = new SoakRunner(grains, settings, gauges, host.Services.GetRequiredService<ILogger<SoakRunner>>());
            await runner.RunAsync(workload, modes, row =>
            {
                committed += row.Committed;
                output.Add(row);
            }, cancellationToken);

            foreach (var mode in modes)
            {
                var problem = await workload.CheckConsistencyAsync(grains, mode, cancellationToken);
                failed |= problem is not null;
                footer.Add($"Consistency check of {mode}: {problem ?? "ok"}.");
            }

            // After the load drained (and the checks' own transactions), what the maps still hold: what a silo keeps when idle.
            footer.Add("Gauges after the load stopped and the checks ran: " +
                string.Join(", ", gauges.Read().Select(g => $"{g.Key}={g.Value.ToString(CultureInfo.InvariantCulture)}")) + ".");
            await host.StopAsync(CancellationToken.None);
        }

        if (durability.DataFolder is { } folder)
        {
            var restart = await RestartReport.MeasureAsync(durability, folder, cancellationToken);
            footer.Add($"Restart: {restart.Text}.");
            File.WriteAllText(Path.Combine(outDirectory, "restart.txt"), restart.Text + Environment.NewLine);
        }

        foreach (var line in footer)
        {
            Console.WriteLine(line);
        }

        output.Write(footer);
        Console.WriteLine($"Wrote {output.CsvPath}");
        Console.WriteLine($"Wrote {output.MarkdownPath}");
        return failed || committed == 0 ? 1 : 0;
    }
}
