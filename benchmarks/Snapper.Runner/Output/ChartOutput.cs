using System.Globalization;
using ScottPlot;
using Snapper.Runner.Experiment;
using Snapper.Workloads;

namespace Snapper.Runner.Output;

/// <summary>
/// PNG charts of a run: for a sweep, throughput per mode against the swept parameter (log scale, since the modes
/// differ by orders of magnitude) and p50/p99 latency, a line and marker shape per mode; for one parameter point, a bar
/// per mode. Values are the medians of repeated cells, with the range of the repetitions as whiskers. Where a mode ran
/// several pipeline sizes, each point shows its best pipeline. One pair of charts per logging setting.
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
        // One line (or bar) per mode, or per mode and setting where non-numeric parameters differ between rows: the
        // logging settings a run compared, or the --tag values of runs combined into one file. A second swept number
        // (the marketplace's key skew beside its actor skew) is a series too, not a jump on one line.
        var numericVarying = best.SelectMany(r => r.Parameters)
            .Where(p => p.Key != "pipeline" && double.TryParse(p.Value, CultureInfo.InvariantCulture, out _))
            .Select(p => p.Key).Distinct().Where(key => best.Select(r => Value(r, key)).Distinct().Count() > 1).ToArray();
        var axis = SweptAxis(best, r => r.Mode.ToString());
        var settingKeys = best.SelectMany(r => r.Parameters)
            .Where(p => p.Key != "pipeline" && p.Key != axis?.Name && (!double.TryParse(p.Value, CultureInfo.InvariantCulture, out _) || numericVarying.Contains(p.Key)))
            .Select(p => p.Key).Distinct()
            // Hybrid's pact% and the baseline's locks belong to their mode, not to a setting: the mode's name carries them.
            .Where(key => key is not ("pact%" or OrleansTxnLocks.Parameter) && best.Select(r => Value(r, key)).Distinct().Count() > 1).ToArray();
        string SeriesOf(RunResult r) => string.Join(' ', settingKeys.Select(key => $"{key}={Value(r, key)}").Prepend(ModeName(r)));
        var series = best.Select(SeriesOf).Distinct().ToArray();
        if (axis is null)
        {
            return WriteBars(directory, file, title, best, series, SeriesOf);
        }

        var (axisName, xOf) = axis.Value;
        var xs = best.Select(xOf).Distinct().Order().ToArray();
        var written = new List<string>();

        // Colors by series, not left to the plot: it takes the next palette color per item added, and whiskers and labels
        // are items too, so with three points per line every line came out in the same color.
        var palette = new ScottPlot.Palettes.Category10();
        var throughput = new Plot();
        var labels = new List<PointLabel>();
        foreach (var (name, index) in series.Select((name, index) => (name, index)))
        {
            var points = best.Where(r => SeriesOf(r) == name).OrderBy(xOf).ToArray();
            var line = throughput.Add.Scatter(points.Select(xOf).ToArray(), points.Select(r => Log(r.CommittedPerSecond)).ToArray());
            line.Color = palette.GetColor(index);
            line.LegendText = name;
            line.MarkerSize = 9;
            line.MarkerShape = Markers[index % Markers.Length];
            line.LineWidth = 2;
            foreach (var r in points)
            {
                Range(throughput, xOf(r), r, line.Color, xs);
                // Log-scale axes label only decades; the value itself is what a reader compares.
                labels.Add(new PointLabel(xOf(r), Log(r.CommittedPerSecond), r.CommittedPerSecond.ToString("N0", CultureInfo.InvariantCulture), line.Color));
            }
        }

        LogTicks(throughput);
        Decorate(throughput, $"{title}: committed transactions per second (log scale)", axisName, "committed txn/s", xs);
        var low = best.Min(r => Log(r.Spread?.MinPerSecond ?? r.CommittedPerSecond));
        var high = best.Max(r => Log(r.Spread?.MaxPerSecond ?? r.CommittedPerSecond));
        var margin = Math.Max(high - low, 0.5) * 0.15;
        throughput.Axes.SetLimitsY(low - margin, high + margin);
        PlaceLabels(throughput, labels, high - low + 2 * margin, xs);
        written.Add(Save(throughput, directory, $"{file}-throughput.png"));

        var latency = new Plot();
        foreach (var (name, index) in series.Select((name, index) => (name, index)))
        {
            var points = best.Where(r => SeriesOf(r) == name).OrderBy(xOf).ToArray();
            var pointXs = points.Select(xOf).ToArray();
            var p50 = latency.Add.Scatter(pointXs, points.Select(r => r.P50Ms).ToArray());
            p50.Color = palette.GetColor(index);
            p50.LegendText = $"{name} p50";
            p50.MarkerSize = 7;
            p50.MarkerShape = Markers[index % Markers.Length];
            var p99 = latency.Add.Scatter(pointXs, points.Select(r => r.P99Ms).ToArray());
            p99.LegendText = $"{name} p99";
            p99.Color = p50.Color;
            p99.LinePattern = LinePattern.Dashed;
            p99.MarkerSize = 7;
            p99.MarkerShape = p50.MarkerShape;
        }

        Decorate(latency, $"{title}: latency of committed transactions", axisName, "latency (ms)", xs);
        written.Add(Save(latency, directory, $"{file}-latency.png"));
        return written;
    }

    /// <summary>
    /// The swept parameter: a numeric one (not the pipeline) that takes several values within one series. A parameter
    /// that differs only between series (Hybrid's pact% beside the other modes, a variant's setting) is no axis: with
    /// none, the run measured one point, and the chart is bars.
    /// </summary>
    private static (string Name, Func<RunResult, double> X)? SweptAxis(IReadOnlyList<RunResult> results, Func<RunResult, string> seriesOf)
    {
        var keys = results.SelectMany(r => r.Parameters.Where(p => p.Key != "pipeline" && double.TryParse(p.Value, CultureInfo.InvariantCulture, out _)).Select(p => p.Key)).Distinct();
        foreach (var key in keys)
        {
            if (results.GroupBy(seriesOf).Any(series => series.Select(r => Value(r, key)).Distinct().Count() > 1))
            {
                return (key, r => double.Parse(Value(r, key), CultureInfo.InvariantCulture));
            }
        }

        return null;
    }

    /// <summary>Marker shapes cycled with the colors, so that series stay apart in grey print and where colors repeat.</summary>
    private static readonly MarkerShape[] Markers =
        [MarkerShape.FilledCircle, MarkerShape.FilledSquare, MarkerShape.FilledTriangleUp, MarkerShape.FilledDiamond,
         MarkerShape.OpenCircle, MarkerShape.OpenSquare, MarkerShape.OpenTriangleUp, MarkerShape.OpenDiamond];

    private static double Log(double perSecond) => Math.Log10(Math.Max(perSecond, 1));

    /// <summary>
    /// One parameter point: a bar per series (mode, or mode and setting) on a log scale with its value on top, and the
    /// range of its repetitions as a whisker; latency as p50 and p99 bars side by side per series.
    /// </summary>
    private static IReadOnlyList<string> WriteBars(string directory, string file, string title, IReadOnlyList<RunResult> best, string[] series, Func<RunResult, string> seriesOf)
    {
        var palette = new ScottPlot.Palettes.Category10();
        // Bars start a decade below the smallest value's decade: on a log scale a bar from 1 spends most of the chart
        // on the decades every mode shares.
        var floor = Math.Max(0, Math.Floor(best.Min(r => Log(r.Spread?.MinPerSecond ?? r.CommittedPerSecond))) - 1);
        var throughput = new Plot();
        var latency = new Plot();
        var ticks = new ScottPlot.TickGenerators.NumericManual();
        for (var i = 0; i < series.Length; i++)
        {
            var r = best.Where(x => seriesOf(x) == series[i]).MaxBy(x => x.CommittedPerSecond)!;
            var color = palette.GetColor(i);
            throughput.Add.Bar(new Bar { Position = i, Value = Log(r.CommittedPerSecond), ValueBase = floor, FillColor = color, Size = 0.7 });
            Range(throughput, i, r, Colors.Black, [0, series.Length - 1]);
            var label = throughput.Add.Text(r.CommittedPerSecond.ToString("N0", CultureInfo.InvariantCulture), i, Log(r.Spread?.MaxPerSecond ?? r.CommittedPerSecond));
            label.LabelFontSize = 13;
            label.LabelAlignment = Alignment.LowerCenter;
            label.LabelOffsetY = -4;

            latency.Add.Bar(new Bar { Position = i - 0.18, Value = r.P50Ms, FillColor = color, Size = 0.34 });
            latency.Add.Bar(new Bar { Position = i + 0.18, Value = r.P99Ms, FillColor = color.WithAlpha(0.45), Size = 0.34 });
            foreach (var (x, value) in new[] { (i - 0.18, r.P50Ms), (i + 0.18, r.P99Ms) })
            {
                var text = latency.Add.Text(value.ToString(value < 10 ? "0.00" : "0.0", CultureInfo.InvariantCulture), x, value);
                text.LabelFontSize = 11;
                text.LabelAlignment = Alignment.LowerCenter;
                text.LabelOffsetY = -3;
            }

            ticks.AddMajor(i, series[i]);
        }

        LogTicks(throughput);
        var top = best.Max(r => Log(r.Spread?.MaxPerSecond ?? r.CommittedPerSecond));
        throughput.Axes.SetLimitsY(floor, Math.Ceiling(top + 0.25));
        latency.Axes.SetLimitsY(0, best.Max(r => r.P99Ms) * 1.15);
        var written = new List<string>();
        foreach (var (plot, what, unit, name) in new[]
        {
            (throughput, best.Any(r => r.Spread is { Count: > 1 }) ? "committed transactions per second (log scale; whiskers: range of the repetitions)" : "committed transactions per second (log scale)", "committed txn/s", "throughput"),
            (latency, "latency of committed transactions (p50, and p99 lighter)", "latency (ms)", "latency"),
        })
        {
            plot.Axes.Bottom.TickGenerator = ticks;
            plot.Axes.SetLimitsX(-0.6, series.Length - 0.4);
            plot.Title($"{title}: {what}");
            plot.YLabel(unit);
            plot.Axes.Title.Label.FontSize = 14;
            written.Add(Save(plot, directory, $"{file}-{name}.png"));
        }

        return written;
    }

    /// <summary>A whisker from the smallest to the largest repetition of a cell, when it ran more than once.</summary>
    private static void Range(Plot plot, double x, RunResult r, Color color, double[] xs)
    {
        if (r.Spread is not { Count: > 1 } spread)
        {
            return;
        }

        var cap = CapHalfWidth(xs);
        var (low, high) = (Log(spread.MinPerSecond), Log(spread.MaxPerSecond));
        foreach (var (x1, y1, x2, y2) in new[] { (x, low, x, high), (x - cap, low, x + cap, low), (x - cap, high, x + cap, high) })
        {
            var segment = plot.Add.Line(x1, y1, x2, y2);
            segment.Color = color;
            segment.LineWidth = 1.5f;
        }
    }

    /// <summary>Half the width of a whisker's caps, in x units.</summary>
    private static double CapHalfWidth(double[] xs) => Math.Max(xs.Length > 1 ? (xs.Max() - xs.Min()) * 0.012 : 0.05, 0.05);

    /// <summary>Ticks of a log10 axis labelled with the values themselves.</summary>
    private static void LogTicks(Plot plot) => plot.Axes.Left.TickGenerator = new ScottPlot.TickGenerators.NumericAutomatic
    {
        MinorTickGenerator = new ScottPlot.TickGenerators.LogMinorTickGenerator(),
        IntegerTicksOnly = true,
        LabelFormatter = y => Math.Pow(10, y).ToString("N0", CultureInfo.InvariantCulture),
    };

    /// <summary>A point's value label, before it is placed: the point (x, and y on the chart's log axis), its text and its line's color.</summary>
    private readonly record struct PointLabel(double X, double Y, string Text, Color Color);

    /// <summary>
    /// Places the value labels of a line chart so that none covers another label or another mode's marker where lines
    /// run close (PACT, Hybrid and ACT within 10-20 % of each other drew their values on top of each other, or on each
    /// other's markers). Per x, from the highest point down: a label goes above its point if it stays clear of what is
    /// placed above; else below its point, if it stays clear of the next point's marker; else beside its point (to the
    /// right, or to the left at the last x, where it would run past the plot's edge), or on the other side if a label
    /// beside the next point already sits in that gap at that height and the gap is too narrow for both (Hybrid's values
    /// at Zipf 1.25 and 1.5 of sweep 11 were drawn on top of each other); and where even that would cover a label above,
    /// below its point as low as needed. Above or below is preferred because a label beside its point sits
    /// on the line leaving it. <paramref name="span"/> is the y axis' span in data units, to convert pixels; <paramref name="xs"/>
    /// the x values, in order.
    /// </summary>
    private static void PlaceLabels(Plot plot, IReadOnlyList<PointLabel> labels, double span, double[] xs)
    {
        // Title, ticks and axis label take about 110 px of the chart's height; a 12 pt label is about 16 px; the markers
        // are 9 px (see WriteCharts).
        const double PlotPixels = ChartHeight - 110, LabelPixels = 17, GapPixels = 3, MarkerPixels = 9;
        var perPixel = span / PlotPixels;
        var height = LabelPixels * perPixel;
        var clear = (MarkerPixels / 2 + GapPixels) * perPixel; // a point's center to the nearest edge of a label off its marker
        var capHalfWidth = CapHalfWidth(xs);
        // The data area is about 600 px wide (the legend and the y axis take the rest) and spans the x values with a
        // tenth of their span on either side (see Decorate); a 12 pt digit is about 8 px wide.
        const double DataPixels = ChartWidth - 300, DigitPixels = 8;
        var xPerPixel = (xs.Length > 1 ? (xs[^1] - xs[0]) * 1.2 : 1) / DataPixels;
        // Labels placed beside their points, by the gap they sit in (the index of the x on its left) and their y.
        var besides = new List<(int Gap, double Y)>();
        // From the last x back, so that a label put left of a point is known when the point before it chooses a side.
        foreach (var column in labels.GroupBy(l => l.X).OrderByDescending(c => c.Key))
        {
            var points = column.OrderByDescending(l => l.Y).ToArray();
            // The lowest y taken so far in this column by the labels, and by the labels and markers (a label beside its
            // point is clear of the markers above it, not of their labels).
            double labelFloor = double.PositiveInfinity, floor = double.PositiveInfinity;
            for (var i = 0; i < points.Length; i++)
            {
                var point = points[i];
                var nextMarkerTop = i + 1 < points.Length ? points[i + 1].Y + clear : double.NegativeInfinity;
                var label = plot.Add.Text(point.Text, point.X, point.Y);
                label.LabelFontSize = 12;
                label.LabelFontColor = point.Color;
                label.LabelAlignment = Alignment.LowerCenter;
                if (point.Y + clear + height <= floor)
                {
                    label.Location = new Coordinates(point.X, point.Y + clear);
                    labelFloor = point.Y + clear;
                }
                else if (Math.Min(point.Y - clear, floor) - height >= nextMarkerTop || point.Y + height / 2 > labelFloor)
                {
                    // Below, clear of the next marker; or, when a label above leaves no room beside either, as low as needed.
                    labelFloor = Math.Min(point.Y - clear, floor) - height;
                    label.Location = new Coordinates(point.X, labelFloor);
                }
                else
                {
                    // Past the whisker's caps, which are wider than the marker.
                    // Two labels beside their points share a gap only if both fit in it side by side.
                    var sharedGapWidth = 2 * (capHalfWidth + (point.Text.Length * DigitPixels + 2 * GapPixels) * xPerPixel);
                    var side = BesideSide(xs, Array.IndexOf(xs, point.X), point.Y, height, sharedGapWidth, besides);
                    label.Location = new Coordinates(point.X + side * capHalfWidth, point.Y);
                    label.LabelAlignment = side < 0 ? Alignment.MiddleRight : Alignment.MiddleLeft;
                    label.LabelOffsetX = (float)(side * GapPixels);
                    labelFloor = point.Y - height / 2;
                }

                floor = Math.Min(labelFloor, point.Y - clear);
            }
        }
    }

    /// <summary>
    /// The side (-1 left, 1 right) a label beside the point at <c>xs[index]</c> goes to: the right, unless that gap is
    /// narrower than <paramref name="sharedGapWidth"/> and a label already placed beside a point sits in it within a
    /// label's <paramref name="height"/> of <paramref name="y"/>, and the left is free. The first x has no room on its
    /// left, the last none on its right. Records the choice in <paramref name="besides"/>.
    /// </summary>
    private static int BesideSide(double[] xs, int index, double y, double height, double sharedGapWidth, List<(int Gap, double Y)> besides)
    {
        var leftGap = index > 0 ? xs[index] - xs[index - 1] : 0;
        var rightGap = index < xs.Length - 1 ? xs[index + 1] - xs[index] : 0;
        var side = rightGap > 0 ? 1 : -1;
        if (leftGap > 0 && rightGap > 0 && Taken(side) && !Taken(-side))
        {
            side = -side;
        }

        besides.Add((GapOf(side), y));
        return side;

        int GapOf(int s) => s > 0 ? index : index - 1;
        bool Taken(int s) => (s > 0 ? rightGap : leftGap) < sharedGapWidth && besides.Exists(b => b.Gap == GapOf(s) && Math.Abs(b.Y - y) < height);
    }

    /// <summary>A series' mode with what belongs to it: Hybrid's share of PACTs, a baseline's lock order.</summary>
    private static string ModeName(RunResult r) =>
        r.Parameters.Any(p => p.Key == "pact%") ? $"{r.Mode} ({Value(r, "pact%")}% PACT)"
        : r.Parameters.Any(p => p.Key == OrleansTxnLocks.Parameter) ? $"{r.Mode} ({Value(r, OrleansTxnLocks.Parameter)} locks)"
        : r.Mode.ToString();

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

    /// <summary>Every chart's size in pixels; label placement converts pixels to data units with the height.</summary>
    private const int ChartWidth = 900, ChartHeight = 560;

    private static string Save(Plot plot, string directory, string name)
    {
        var path = Path.Combine(directory, name);
        plot.SavePng(path, ChartWidth, ChartHeight);
        return path;
    }
}
