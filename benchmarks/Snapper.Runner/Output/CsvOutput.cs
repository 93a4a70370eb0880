using System.Globalization;
using System.Text;
using Snapper.Runner.Experiment;

namespace Snapper.Runner.Output;

/// <summary>
/// Results as CSV, one row per (workload, mode, parameter point). The first eight columns are fixed:
/// <c>workload,mode,params,committed_per_s,p50_ms,p90_ms,p99_ms,abort_rate</c>; then the aborts by reason
/// (<c>reason=count;...</c>), the committed count and the consistency check.
/// </summary>
public static class CsvOutput
{
    public const string Header = "workload,mode,params,committed_per_s,p50_ms,p90_ms,p99_ms,abort_rate,aborts_by_reason,committed,consistency";

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
                r.ConsistencyError is null ? "ok" : Quote(r.ConsistencyError)));
        }

        File.WriteAllText(path, csv.ToString());
    }

    private static string F(double value, string format) => value.ToString(format, CultureInfo.InvariantCulture);

    private static string Quote(string text) => "\"" + text.Replace("\"", "\"\"", StringComparison.Ordinal) + "\"";
}
