using System.Globalization;
using Snapper.Runner.Experiment;
using Spectre.Console;

namespace Snapper.Runner.Output;

/// <summary>The end-of-run table on the console.</summary>
public static class ResultTable
{
    public static void Print(IReadOnlyList<RunResult> results)
    {
        // A repeated cell shows the median committed rate with its range and count: "12,345 (11,020-13,870, x3)".
        var table = new Table().Title("Results (measured epochs only)")
            .AddColumns("workload", "mode", "params", "txn/s", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "mean ms", "abort rate", "aborts by reason", "log B/txn", "fsyncs/txn", "check");
        foreach (var r in results)
        {
            table.AddRow(
                r.Workload,
                r.Mode.ToString(),
                Markup.Escape(r.ParamsText),
                r.Spread is { } spread
                    ? $"{r.CommittedPerSecond.ToString("N0", CultureInfo.InvariantCulture)} ({spread.MinPerSecond.ToString("N0", CultureInfo.InvariantCulture)}-{spread.MaxPerSecond.ToString("N0", CultureInfo.InvariantCulture)}, x{spread.Count})"
                    : r.CommittedPerSecond.ToString("N0", CultureInfo.InvariantCulture),
                r.P50Ms.ToString("F2", CultureInfo.InvariantCulture),
                r.P90Ms.ToString("F2", CultureInfo.InvariantCulture),
                r.P99Ms.ToString("F2", CultureInfo.InvariantCulture),
                double.IsNaN(r.P999Ms) ? "-" : r.P999Ms.ToString("F2", CultureInfo.InvariantCulture),
                double.IsNaN(r.MeanMs) ? "-" : r.MeanMs.ToString("F2", CultureInfo.InvariantCulture),
                r.AbortRate.ToString("P1", CultureInfo.InvariantCulture),
                Markup.Escape(string.Join(' ', r.AbortsByReason.Select(a => $"{a.Key}={a.Value}"))),
                double.IsNaN(r.LogBytesPerTxn) ? "-" : r.LogBytesPerTxn.ToString("N0", CultureInfo.InvariantCulture),
                double.IsNaN(r.FsyncsPerTxn) ? "-" : r.FsyncsPerTxn.ToString("F3", CultureInfo.InvariantCulture),
                r.ConsistencyError is null ? "ok" : Markup.Escape(r.ConsistencyError));
        }

        if (Console.IsOutputRedirected)
        {
            // Logs and CI capture the output: do not squeeze the table into an 80-column default.
            AnsiConsole.Profile.Width = 220;
        }

        AnsiConsole.Write(table);
    }
}
