namespace Snapper.Runner.Experiment;

/// <summary>The spread of a cell measured several times: its repetitions' lowest and highest committed rates.</summary>
public sealed record RepeatSpread(double MinPerSecond, double MaxPerSecond, int Count);

/// <summary>
/// Cells run several times (<c>--repeat</c>): each repetition is tagged <c>rep=i</c>; the summary has one row per
/// cell with the median of its repetitions (committed rate, latency percentiles and mean each the median of theirs), the
/// abort rate of all of them together, and their spread. On this machine a cell moves by 10-40 % from one run to the
/// next; the median of interleaved repetitions is what comparisons are made on.
/// </summary>
public static class Repetitions
{
    public const string Key = "rep";

    public static KeyValuePair<string, string> Tag(int repetition) => new(Key, repetition.ToString(System.Globalization.CultureInfo.InvariantCulture));

    /// <summary>One row per cell, in the order the cells first ran; rows without a repetition tag pass through.</summary>
    public static IReadOnlyList<RunResult> Summarize(IReadOnlyList<RunResult> results) =>
        [.. results.GroupBy(CellOf).Select(cell => cell.Count() == 1 && !cell.First().Parameters.Any(p => p.Key == Key) ? cell.First() : Median([.. cell]))];

    private static string CellOf(RunResult r) => $"{r.Workload}|{r.Mode}|{string.Join(';', r.Parameters.Where(p => p.Key != Key).Select(p => $"{p.Key}={p.Value}"))}|{r.Pipeline}";

    private static RunResult Median(RunResult[] runs)
    {
        var first = runs[0];
        var rates = runs.Select(r => r.CommittedPerSecond).ToArray();
        var aborts = runs.SelectMany(r => r.AbortsByReason).GroupBy(a => a.Key).ToDictionary(g => g.Key, g => g.Sum(a => a.Value));
        return first with
        {
            Parameters = [.. first.Parameters.Where(p => p.Key != Key)],
            Committed = runs.Sum(r => r.Committed),
            Aborted = runs.Sum(r => r.Aborted),
            CommittedPerSecond = MedianOf(rates),
            P50Ms = MedianOf(runs.Select(r => r.P50Ms)),
            P90Ms = MedianOf(runs.Select(r => r.P90Ms)),
            P99Ms = MedianOf(runs.Select(r => r.P99Ms)),
            MeanMs = MedianOf(runs.Select(r => r.MeanMs)),
            P999Ms = MedianOf(runs.Select(r => r.P999Ms)),
            AbortsByReason = aborts,
            ConsistencyError = runs.Select(r => r.ConsistencyError).FirstOrDefault(e => e is not null),
            LogBytesPerTxn = MedianOf(runs.Select(r => r.LogBytesPerTxn)),
            FsyncsPerTxn = MedianOf(runs.Select(r => r.FsyncsPerTxn)),
            Usage = null,
            Spread = new RepeatSpread(rates.Min(), rates.Max(), runs.Length),
        };
    }

    /// <summary>The median (the mean of the middle two for an even count); NaN if every value is NaN.</summary>
    public static double MedianOf(IEnumerable<double> values)
    {
        var sorted = values.Where(v => !double.IsNaN(v)).Order().ToArray();
        return sorted.Length == 0 ? double.NaN
            : sorted.Length % 2 == 1 ? sorted[sorted.Length / 2]
            : (sorted[sorted.Length / 2 - 1] + sorted[sorted.Length / 2]) / 2;
    }
}
