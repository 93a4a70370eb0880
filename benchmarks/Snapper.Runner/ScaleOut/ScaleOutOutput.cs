using System.Globalization;
using System.Text;
using ScottPlot;
using Snapper.Workloads;

namespace Snapper.Runner.ScaleOut;

/// <summary>
/// The scale-out scenario's files: <c>scaleout.csv</c> (a row per second: phase, committed per mode and in all, aborts,
/// aborts by migration, migrations done), <c>phases.csv</c> (a row per phase: length, throughput, latency percentiles,
/// aborts by reason), <c>scaleout.md</c> (the same as tables, with the migration times and the footer) and
/// <c>scaleout-throughput.png</c> (committed per second over time, a line per mode and the total, the phases shaded).
/// </summary>
internal sealed class ScaleOutOutput(string directory, string title, IReadOnlyList<BenchmarkMode> modes)
{
    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;

    /// <summary>Writes the files; returns the lines to print (the phase table and where the files are).</summary>
    public IReadOnlyList<string> Write(IReadOnlyList<ScaleOutSecond> seconds, IReadOnlyList<ScaleOutPhaseSummary> phases, RebalanceResult? rebalance, IReadOnlyList<string> footer)
    {
        Directory.CreateDirectory(directory);
        var perSecond = new StringBuilder("second,phase," + string.Concat(modes.Select(m => $"committed_{m},")) + "committed,aborted,aborted_migration,migrated\n");
        foreach (var row in seconds)
        {
            perSecond.Append(Invariant, $"{row.Second},{row.Phase},{string.Concat(row.CommittedByMode.Select(c => $"{c},"))}{row.Committed},{row.Aborted},{row.MigrationAborts},{row.Migrated}\n");
        }

        File.WriteAllText(Path.Combine(directory, "scaleout.csv"), perSecond.ToString());

        var phaseCsv = new StringBuilder("phase,seconds,committed,txn_per_s,p50_ms,p90_ms,p99_ms,aborted,aborted_migration,aborts\n");
        foreach (var phase in phases)
        {
            phaseCsv.Append(Invariant, $"{phase.Phase},{phase.Duration.TotalSeconds:0.0},{phase.Committed},{phase.PerSecond:0},{phase.Percentile(0.5):0.00},{phase.Percentile(0.9):0.00},{phase.Percentile(0.99):0.00},{phase.Aborted},{phase.MigrationAborts},\"{phase.AbortsText}\"\n");
        }

        File.WriteAllText(Path.Combine(directory, "phases.csv"), phaseCsv.ToString());

        var submitted = phases.Sum(p => p.Committed + p.Aborted);
        var migrationAborts = phases.Sum(p => p.MigrationAborts);
        var lines = new List<string>
        {
            $"# Scale-out: {title}",
            "",
            "| phase | seconds | committed | txn/s | p50 ms | p90 ms | p99 ms | aborted | by migration | aborts by reason |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
        };
        lines.AddRange(phases.Select(p => string.Create(Invariant,
            $"| {p.Phase} | {p.Duration.TotalSeconds:0.0} | {p.Committed:N0} | {p.PerSecond:N0} | {p.Percentile(0.5):0.00} | {p.Percentile(0.9):0.00} | {p.Percentile(0.99):0.00} | {p.Aborted:N0} | {p.MigrationAborts} | {p.AbortsText} |")));
        lines.Add("");
        lines.Add(string.Create(Invariant,
            $"Transactions submitted: {submitted:N0}; aborted because of migration (ActorMigrating): {migrationAborts} ({(submitted == 0 ? 0 : 100.0 * migrationAborts / submitted):0.####} %)."));
        if (rebalance is not null)
        {
            var times = rebalance.Moved.Select(m => m.Elapsed.TotalMilliseconds).Order().ToArray();
            var moves = rebalance.Planned.GroupBy(m => (m.From, m.To)).OrderBy(g => g.Key).Select(g => $"{g.Count()} from worker {g.Key.From} to {g.Key.To}");
            lines.Add($"Rebalance: {rebalance.Planned.Count} moves planned ({string.Join(", ", moves)}), {rebalance.Moved.Count} done, {rebalance.Failed.Count} failed" +
                (rebalance.Failed.Count == 0 ? "." : $": {string.Join("; ", rebalance.Failed.GroupBy(f => f.Reason).Select(g => $"{g.Key} {g.Count()}"))}."));
            if (times.Length > 0)
            {
                lines.Add(string.Create(Invariant,
                    $"Migration time per actor, as the rebalance saw it (queueing at the helpers included): p50 {Experiment.ExperimentRunner.Percentile(times, 0.5):0.0} ms, p99 {Experiment.ExperimentRunner.Percentile(times, 0.99):0.0} ms, max {times[^1]:0.0} ms."));
            }
        }

        lines.AddRange(footer);
        lines.Add("");
        lines.Add("Files: scaleout.csv (per second), phases.csv (per phase), scaleout-throughput.png.");
        File.WriteAllLines(Path.Combine(directory, "scaleout.md"), lines);
        if (seconds.Count > 0)
        {
            Chart(seconds, Path.Combine(directory, "scaleout-throughput.png"));
        }

        return [.. lines.Where(l => l.Length > 0), $"Wrote {Path.Combine(directory, "scaleout.md")}"];
    }

    private void Chart(IReadOnlyList<ScaleOutSecond> seconds, string path)
    {
        var plot = new Plot();
        var palette = new ScottPlot.Palettes.Category10();
        var top = seconds.Max(s => s.Committed) * 1.15;

        // The phases as shaded spans, named at the top.
        foreach (var (phase, index) in seconds.GroupBy(s => s.Phase).Select((g, i) => (g, i)))
        {
            var (from, to) = (phase.Min(s => s.Second) - 1, phase.Max(s => s.Second));
            var span = plot.Add.HorizontalSpan(from, to);
            span.FillStyle.Color = (index % 2 == 0 ? Colors.Gray : Colors.SteelBlue).WithAlpha(0.10);
            span.LineStyle.Width = 0;
            var label = plot.Add.Text(phase.Key.ToString(), (from + to) / 2.0, top);
            label.LabelFontSize = 12;
            label.LabelAlignment = Alignment.UpperCenter;
        }

        var xs = seconds.Select(s => (double)s.Second).ToArray();
        if (modes.Count > 1)
        {
            for (var m = 0; m < modes.Count; m++)
            {
                var line = plot.Add.Scatter(xs, seconds.Select(s => (double)s.CommittedByMode[m]).ToArray());
                line.LegendText = modes[m].ToString();
                line.Color = palette.GetColor(m + 1);
                line.MarkerSize = 0;
                line.LineWidth = 1.5f;
            }
        }

        var total = plot.Add.Scatter(xs, seconds.Select(s => (double)s.Committed).ToArray());
        total.LegendText = modes.Count > 1 ? "all" : modes[0].ToString();
        total.Color = palette.GetColor(0);
        total.MarkerSize = 0;
        total.LineWidth = 2.5f;

        plot.Axes.SetLimits(0, xs[^1], 0, top);
        plot.Title($"{title}: committed per second");
        plot.XLabel("seconds");
        plot.YLabel("committed txn/s");
        plot.Legend.Alignment = Alignment.LowerRight;
        plot.Axes.Title.Label.FontSize = 13;
        plot.SavePng(path, 1000, 520);
    }
}
