using System.Globalization;
using System.Text;
using Snapper.Runner.Experiment;

namespace Snapper.Runner.Output;

/// <summary>
/// Results as CSV, one row per (workload, mode, parameter point). The first eight columns are fixed:
/// <c>workload,mode,params,committed_per_s,p50_ms,p90_ms,p99_ms,abort_rate</c>; then the aborts by reason
/// (<c>reason=count;...</c>), the committed count, write-ahead log bytes and fsyncs per committed transaction
/// (empty without a log), the lowest and highest committed rate of a repeated cell and its repetitions (empty for a
/// cell run once; <c>committed_per_s</c> is then the median), the mean latency and p99.9 (a mean far above p99 means a
/// few transactions waited very long, which the percentiles hide) and the consistency check. Files from before the log,
/// repetition or mean columns still read back.
/// </summary>
public static class CsvOutput
{
    public const string Header = "workload,mode,params,committed_per_s,p50_ms,p90_ms,p99_ms,abort_rate,aborts_by_reason,committed,log_bytes_per_txn,fsyncs_per_txn,committed_per_s_min,committed_per_s_max,repeats,mean_ms,p999_ms,consistency";

    public static void Write(string path, IEnumerable<RunResult> results)
    {
        var csv = new StringBuilder().AppendLine(Header);
        foreach (var r in results)
        {
            csv.AppendLine(string.Join(',',
                r.Workload,
                r.Mode,
                r.ParamsText,
                F(r.CommittedPerSecond, "F1"),
                F(r.P50Ms, "F3"),
                F(r.P90Ms, "F3"),
                F(r.P99Ms, "F3"),
                F(r.AbortRate, "F4"),
                string.Join(';', r.AbortsByReason.Select(a => $"{a.Key}={a.Value}")),
                r.Committed.ToString(CultureInfo.InvariantCulture),
                double.IsNaN(r.LogBytesPerTxn) ? "" : F(r.LogBytesPerTxn, "F1"),
                double.IsNaN(r.FsyncsPerTxn) ? "" : F(r.FsyncsPerTxn, "F4"),
                r.Spread is null ? "" : F(r.Spread.MinPerSecond, "F1"),
                r.Spread is null ? "" : F(r.Spread.MaxPerSecond, "F1"),
                r.Spread is null ? "" : r.Spread.Count.ToString(CultureInfo.InvariantCulture),
                double.IsNaN(r.MeanMs) ? "" : F(r.MeanMs, "F3"),
                double.IsNaN(r.P999Ms) ? "" : F(r.P999Ms, "F3"),
                r.ConsistencyError is null ? "ok" : Quote(r.ConsistencyError)));
        }

        File.WriteAllText(path, csv.ToString());
    }

    /// <summary>
    /// Reads back a file written by <see cref="Write"/>, for redrawing charts without rerunning. The aborted count
    /// is recovered from the reasons; a failed consistency check is kept as its text.
    /// </summary>
    public static IReadOnlyList<RunResult> Read(string path)
    {
        var header = File.ReadLines(path).First();
        var withLog = header.Contains("log_bytes_per_txn", StringComparison.Ordinal);
        var withRepeats = header.Contains("repeats", StringComparison.Ordinal);
        var withMean = header.Contains("mean_ms", StringComparison.Ordinal);
        return File.ReadLines(path).Skip(1).Where(line => line.Length > 0).Select(line =>
        {
            var cells = line.Split(',', withMean ? 18 : withRepeats ? 16 : withLog ? 13 : 11);
            var consistency = cells[^1];
            var parameters = cells[2].Split(';').Select(p => p.Split('=', 2)).Select(kv => new KeyValuePair<string, string>(kv[0], kv[1])).ToList();
            var pipeline = int.Parse(parameters.Last(p => p.Key == "pipeline").Value, CultureInfo.InvariantCulture);
            parameters.RemoveAll(p => p.Key == "pipeline");
            var aborts = cells[8].Split(';', StringSplitOptions.RemoveEmptyEntries).Select(a => a.Split('=', 2))
                .ToDictionary(a => a[0], a => long.Parse(a[1], CultureInfo.InvariantCulture));
            return new RunResult(
                cells[0],
                Enum.Parse<Snapper.Workloads.BenchmarkMode>(cells[1]),
                parameters,
                pipeline,
                long.Parse(cells[9], CultureInfo.InvariantCulture),
                aborts.Values.Sum(),
                D(cells[3]),
                D(cells[4]),
                D(cells[5]),
                D(cells[6]),
                aborts,
                consistency == "ok" ? null : consistency.Trim('"'),
                withLog && cells[10].Length > 0 ? D(cells[10]) : double.NaN,
                withLog && cells[11].Length > 0 ? D(cells[11]) : double.NaN,
                Spread: withRepeats && cells[14].Length > 0 ? new RepeatSpread(D(cells[12]), D(cells[13]), int.Parse(cells[14], CultureInfo.InvariantCulture)) : null)
            {
                MeanMs = withMean && cells[15].Length > 0 ? D(cells[15]) : double.NaN,
                P999Ms = withMean && cells[16].Length > 0 ? D(cells[16]) : double.NaN,
            };
        }).ToArray();
    }

    private static double D(string text) => double.Parse(text, CultureInfo.InvariantCulture);

    private static string F(double value, string format) => value.ToString(format, CultureInfo.InvariantCulture);

    private static string Quote(string text) => "\"" + text.Replace("\"", "\"\"", StringComparison.Ordinal) + "\"";
}
