using System.Globalization;
using ScottPlot;
using Snapper.Runner.Experiment;

namespace Snapper.Runner.Output;

/// <summary>
/// PNG charts of a sweep: throughput per mode against the swept parameter (log scale, since the modes
/// differ by orders of magnitude) and p50/p99 latency. Where a mode ran several pipeline sizes, each
/// point shows its best pipeline.
/// </summary>
public static class ChartOutput
{
    public static IReadOnlyList<string> Write(string directory, string workload, IReadOnlyList<RunResult> results)
    {
        // One pair of charts per logging setting when a run compared several: lines of one setting stay few enough for
        // distinct colors, and what a reader compares (modes and variants under one setting) shares a chart.
        var logs = results.Select(r => Value(r, "log")).Distinct().ToArray();
        return logs.Length < 2
            ? WriteCharts(directory, workload, "", results)
            : [.. logs.SelectMany(log => WriteCharts(directory, workload, $"log={log}", [.. results.Where(r => Value(r, "log") == log)]))];
    }

    private static IReadOnlyList<string> WriteCharts(string directory, string workload, string setting, IReadOnlyList<RunResult> results)
    {
        var title = setting.Length == 0 ? workload : $"{workload}, {setting}";
        var file = setting.Length == 0 ? workload : $"{workload}-{setting.Replace('=', '-')}";
        var best = results
            .GroupBy(r => (r.Mode, r.PointText))
            .Select(g => g.MaxBy(r => r.CommittedPerSecond)!)
            .ToArray();
        var (axisName, xOf) = SweptAxis(best);
        // One line per mode, or per mode and setting where non-numeric parameters differ between rows: the logging
        // settings a run compared, or the --tag values of runs combined into one file.
        // A second swept number (the marketplace's key skew beside its actor skew) is a series too, not a jump on one line.
        var settingKeys = best.SelectMany(r => r.Parameters)
            .Where(p => !double.TryParse(p.Value, CultureInfo.InvariantCulture, out _) || (p.Key != axisName && p.Key != "pipeline"))
            .Select(p => p.Key).Distinct().Where(key => best.Select(r => Value(r, key)).Distinct().Count() > 1).ToArray();
        string SeriesOf(RunResult r) => string.Join(' ', settingKeys.Select(key => $"{key}={Value(r, key)}").Prepend(r.Mode.ToString()));
        var series = best.Select(SeriesOf).Distinct().ToArray();
        var xs = best.Select(xOf).Distinct().Order().ToArray();
        var written = new List<string>();

        var throughput = new Plot();
        foreach (var name in series)
        {
            var points = best.Where(r => SeriesOf(r) == name).OrderBy(xOf).ToArray();
            var line = throughput.Add.Scatter(points.Select(xOf).ToArray(), points.Select(r => Math.Log10(Math.Max(r.CommittedPerSecond, 1))).ToArray());
            line.LegendText = name;
            line.MarkerSize = 8;
            line.LineWidth = 2;
            foreach (var r in points)
            {
                // Log-scale axes label only decades; the value itself is what a reader compares.
                Label(throughput, r.CommittedPerSecond.ToString("N0", CultureInfo.InvariantCulture), xOf(r), Math.Log10(Math.Max(r.CommittedPerSecond, 1)), line.Color,
                    above: Array.IndexOf(series, name) % 2 == 0);
            }
        }

        throughput.Axes.Left.TickGenerator = new ScottPlot.TickGenerators.NumericAutomatic
        {
            MinorTickGenerator = new ScottPlot.TickGenerators.LogMinorTickGenerator(),
            IntegerTicksOnly = true,
            LabelFormatter = y => Math.Pow(10, y).ToString("N0", CultureInfo.InvariantCulture),
        };
        Decorate(throughput, $"{title}: committed transactions per second (log scale)", axisName, "committed txn/s", xs);
        written.Add(Save(throughput, directory, $"{file}-throughput.png"));

        var latency = new Plot();
        foreach (var name in series)
        {
            var points = best.Where(r => SeriesOf(r) == name).OrderBy(xOf).ToArray();
            var pointXs = points.Select(xOf).ToArray();
            var p50 = latency.Add.Scatter(pointXs, points.Select(r => r.P50Ms).ToArray());
            p50.LegendText = $"{name} p50";
            p50.MarkerSize = 7;
            var p99 = latency.Add.Scatter(pointXs, points.Select(r => r.P99Ms).ToArray());
            p99.LegendText = $"{name} p99";
            p99.Color = p50.Color;
            p99.LinePattern = LinePattern.Dashed;
            p99.MarkerSize = 7;
        }

        Decorate(latency, $"{title}: latency of committed transactions", axisName, "latency (ms)", xs);
        written.Add(Save(latency, directory, $"{file}-latency.png"));
        return written;
    }

    /// <summary>The parameter that varies across the results, or the mode index when only one point ran.</summary>
    private static (string Name, Func<RunResult, double> X) SweptAxis(IReadOnlyList<RunResult> results)
    {
        // Only numeric parameters can be an axis (the logging setting, for one, is a series instead).
        var keys = results.SelectMany(r => r.Parameters.Where(p => double.TryParse(p.Value, CultureInfo.InvariantCulture, out _)).Select(p => p.Key)).Distinct();
        foreach (var key in keys)
        {
            var values = results.Select(r => Value(r, key)).Distinct().Count();
            if (values > 1)
            {
                return (key, r => double.Parse(Value(r, key), CultureInfo.InvariantCulture));
            }
        }

        var first = results.Count > 0 ? results[0].Parameters.FirstOrDefault(p => double.TryParse(p.Value, CultureInfo.InvariantCulture, out _)) : default;
        return first.Key is null ? ("point", _ => 0) : (first.Key, r => double.Parse(Value(r, first.Key), CultureInfo.InvariantCulture));
    }

    /// <summary>A value label on a point; neighbouring modes alternate above and below their lines so close lines stay readable.</summary>
    private static void Label(Plot plot, string text, double x, double y, Color color, bool above)
    {
        var label = plot.Add.Text(text, x, y);
        label.LabelFontSize = 12;
        label.LabelFontColor = color;
        label.LabelAlignment = above ? Alignment.LowerCenter : Alignment.UpperCenter;
        label.LabelOffsetY = above ? -6 : 6;
    }

    private static string Value(RunResult r, string key) => r.Parameters.FirstOrDefault(p => p.Key == key).Value ?? "0";

    private static void Decorate(Plot plot, string title, string x, string y, double[] xs)
    {
        // Ticks exactly at the swept values: a sweep has a handful of points, often unevenly spaced.
        var ticks = new ScottPlot.TickGenerators.NumericManual();
        foreach (var value in xs)
        {
            ticks.AddMajor(value, value.ToString("0.###", CultureInfo.InvariantCulture));
        }

        plot.Axes.Bottom.TickGenerator = ticks;
        var span = xs.Length > 1 ? xs.Max() - xs.Min() : 1;
        plot.Axes.SetLimitsX(xs.Min() - span * 0.1, xs.Max() + span * 0.1);
        plot.Title(title);
        plot.XLabel(x);
        plot.YLabel(y);
        // Beside the data, not over it: value labels sit on the lines, often in the upper right.
        plot.ShowLegend(Edge.Right);
    }

    private static string Save(Plot plot, string directory, string name)
    {
        var path = Path.Combine(directory, name);
        plot.SavePng(path, 900, 560);
        return path;
    }
}
