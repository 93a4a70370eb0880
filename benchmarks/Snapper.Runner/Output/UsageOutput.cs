using System.Globalization;
using System.Text;
using Snapper.Runner.Cluster;
using Snapper.Runner.Experiment;
using Spectre.Console;

namespace Snapper.Runner.Output;

/// <summary>
/// What each silo of a cluster (and the runner, as <c>client</c>) used per measured cell: <c>cpu.csv</c> next to
/// results.csv, one row per (cell, process), with the cell's <c>workload,mode,params</c> as in results.csv, then
/// <c>silo,cpu_s,user_s,system_s,wall_s,cpu_pct_of_core,committed,cpu_us_per_txn,pact_batches,pacts_per_batch,cpu_us_per_batched_pact,cpu_us_per_batch</c>:
/// CPU seconds (user + system, then each) over the measured epochs, their length, CPU as a percentage of one core, the cell's
/// committed transactions and the process's CPU microseconds per committed transaction; then the PACT batches the
/// silo emitted in the cell (the master's are global batches, a worker's its local ones), PACTs per batch, and its CPU
/// per PACT it batched and per batch (empty where the silo emitted none or keeps no stats file).
/// </summary>
public static class UsageOutput
{
    public const string Header = "workload,mode,params,silo,cpu_s,user_s,system_s,wall_s,cpu_pct_of_core,committed,cpu_us_per_txn,pact_batches,pacts_per_batch,cpu_us_per_batched_pact,cpu_us_per_batch";

    public static void Write(string path, IEnumerable<RunResult> results)
    {
        var csv = new StringBuilder().AppendLine(Header);
        foreach (var r in results)
        {
            foreach (var u in r.Usage ?? [])
            {
                var batched = u.PactBatches is > 0;
                csv.AppendLine(string.Join(',',
                    r.Workload,
                    r.Mode,
                    r.ParamsText,
                    u.Name,
                    F(u.CpuSeconds, "F3"),
                    F(u.UserSeconds, "F3"),
                    F(u.SystemSeconds, "F3"),
                    F(u.WallSeconds, "F3"),
                    F(u.PercentOfCore, "F1"),
                    r.Committed.ToString(CultureInfo.InvariantCulture),
                    F(u.MicrosecondsPer(r.Committed), "F1"),
                    u.PactBatches?.ToString(CultureInfo.InvariantCulture) ?? "",
                    batched ? F(u.BatchedPacts!.Value / (double)u.PactBatches!.Value, "F2") : "",
                    batched ? F(u.MicrosecondsPer(u.BatchedPacts!.Value), "F1") : "",
                    batched ? F(u.MicrosecondsPer(u.PactBatches!.Value), "F1") : ""));
            }
        }

        File.WriteAllText(path, csv.ToString());
    }

    /// <summary>A console table: per cell, each process's share of a core and CPU per committed transaction, and where it batched PACTs, PACTs per batch.</summary>
    public static void Print(IReadOnlyList<RunResult> results)
    {
        var names = results.SelectMany(r => r.Usage ?? []).Select(u => u.Name).Distinct().ToArray();
        if (names.Length == 0)
        {
            return;
        }

        var table = new Table().Title("CPU per process over the measured epochs: % of one core, µs per committed txn, PACTs per batch emitted")
            .AddColumns(["mode", "params", "txn/s", .. names]);
        foreach (var r in results)
        {
            var cells = names.Select(name => r.Usage?.FirstOrDefault(u => u.Name == name) is { } u ? Cell(u, r.Committed) : "-");
            table.AddRow([r.Mode.ToString(), Markup.Escape(r.ParamsText), r.CommittedPerSecond.ToString("N0", CultureInfo.InvariantCulture), .. cells]);
        }

        AnsiConsole.Write(table);
    }

    /// <summary>One line for the run's progress output: each process's share of a core, CPU per committed txn and PACTs per batch.</summary>
    public static string Line(RunResult r) => "cpu: " + string.Join(", ", (r.Usage ?? []).Select(u => $"{u.Name} {Cell(u, r.Committed)}"));

    private static string Cell(SiloUsage u, long committed)
    {
        if (double.IsNaN(u.CpuSeconds))
        {
            return "not read";
        }

        var text = $"{F(u.PercentOfCore, "F0")} % · {F(u.MicrosecondsPer(committed), "F0")} µs";
        return u.PactBatches is > 0 ? $"{text} · {F(u.BatchedPacts!.Value / (double)u.PactBatches.Value, "F1")}/batch" : text;
    }

    private static string F(double value, string format) => double.IsNaN(value) ? "" : value.ToString(format, CultureInfo.InvariantCulture);
}
