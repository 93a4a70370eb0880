using System.Globalization;
using System.Text;
using Snapper.Runner.Experiment;

namespace Snapper.Runner.Output;

/// <summary>
/// A soak's rows as they come: a line on the console, and <c>soak.csv</c> and <c>soak.md</c> (a markdown table) in the
/// output folder, both rewritten after every minute so that a soak cut short keeps its rows. Columns: minute and the
/// seconds it covered; committed and aborted transactions per mode as the client loops saw them; committed per
/// second and their mean latency; aborts by reason (<c>reason=count;...</c>); the silo's own committed and aborted
/// counts per Snapper mode and its in-doubt count; the write-ahead log's MiB written in the minute; working set, GC
/// heap at the last collection, heap live after a forced full collection (all MiB) and collections in the minute;
/// then one column per <c>snapper.entries.*</c> gauge.
/// </summary>
public sealed class SoakOutput(string directory, string title)
{
    private readonly List<SoakRow> _rows = new();
    private IReadOnlyList<string> _printedColumns = [];

    public string CsvPath => Path.Combine(directory, "soak.csv");

    public string MarkdownPath => Path.Combine(directory, "soak.md");

    /// <summary>Adds a minute: prints it and rewrites both files.</summary>
    public void Add(SoakRow row)
    {
        _rows.Add(row);
        var columns = Columns();
        var cells = Cells(row);
        if (!columns.SequenceEqual(_printedColumns))
        {
            // A gauge published late (a service created on first use) adds a column: print the header again.
            Console.WriteLine(string.Join("  ", columns.Select(c => c.PadLeft(Width(c)))));
            _printedColumns = columns;
        }

        Console.WriteLine(string.Join("  ", columns.Select(c => cells.GetValueOrDefault(c, "").PadLeft(Width(c)))));
        Write([]);
    }

    /// <summary>Rewrites both files with the lines to put under the markdown table (consistency checks, the state after the load).</summary>
    public void Write(IReadOnlyList<string> footer)
    {
        var columns = Columns();
        var rows = _rows.Select(Cells).ToArray();
        var csv = new StringBuilder().AppendLine(string.Join(',', columns));
        foreach (var cells in rows)
        {
            csv.AppendLine(string.Join(',', columns.Select(c => cells.GetValueOrDefault(c, ""))));
        }

        File.WriteAllText(CsvPath, csv.ToString());

        var md = new StringBuilder().AppendLine($"# Soak: {title}").AppendLine()
            .AppendLine("| " + string.Join(" | ", columns) + " |")
            .AppendLine("|" + string.Join("|", columns.Select(c => c == "aborts_by_reason" ? " --- " : " ---: ")) + "|");
        foreach (var cells in rows)
        {
            md.AppendLine("| " + string.Join(" | ", columns.Select(c => cells.GetValueOrDefault(c, ""))) + " |");
        }

        foreach (var line in footer)
        {
            md.AppendLine().AppendLine(line);
        }

        File.WriteAllText(MarkdownPath, md.ToString());
    }

    /// <summary>The columns of every row so far, in the order they first appeared.</summary>
    private List<string> Columns()
    {
        var columns = new List<string>();
        foreach (var column in _rows.SelectMany(r => Cells(r).Keys))
        {
            if (!columns.Contains(column))
            {
                columns.Add(column);
            }
        }

        return columns;
    }

    private static Dictionary<string, string> Cells(SoakRow row)
    {
        var cells = new Dictionary<string, string>(StringComparer.Ordinal)
        {
            ["minute"] = I(row.Minute),
            ["seconds"] = F(row.Elapsed.TotalSeconds, "F1"),
        };
        foreach (var (mode, totals) in row.Modes)
        {
            cells[$"{Lower(mode.ToString())}_committed"] = I(totals.Committed);
            cells[$"{Lower(mode.ToString())}_aborted"] = I(totals.Aborted);
        }

        cells["txn_per_s"] = F(row.CommittedPerSecond, "F0");
        cells["mean_ms"] = double.IsNaN(row.MeanLatencyMs) ? "" : F(row.MeanLatencyMs, "F2");
        cells["aborts_by_reason"] = string.Join(';', row.AbortsByReason.Select(a => $"{a.Key}={I(a.Value)}"));
        foreach (var mode in Enum.GetNames<TxnMode>().Select(Lower))
        {
            cells[$"silo_{mode}_committed"] = I(row.Silo.GetValueOrDefault(SiloCounters.Key(mode, "committed")));
            cells[$"silo_{mode}_aborted"] = I(row.Silo.GetValueOrDefault(SiloCounters.Key(mode, "aborted")));
        }

        cells["silo_in_doubt"] = I(row.Silo.Where(s => s.Key.EndsWith(".in_doubt", StringComparison.Ordinal)).Sum(s => s.Value));
        cells["log_mib"] = F(row.Silo.GetValueOrDefault(SiloCounters.LogBytes) / (1024.0 * 1024.0), "F1");
        cells["working_set_mib"] = F(row.Memory.WorkingSetMib, "F1");
        cells["gc_heap_mib"] = F(row.Memory.GcHeapMib, "F1");
        cells["live_heap_mib"] = F(row.Memory.LiveHeapMib, "F1");
        cells["gcs"] = I(row.Memory.Collections);
        foreach (var (name, size) in row.Entries)
        {
            cells[name] = I(size);
        }

        return cells;
    }

    /// <summary>Console column width: the header's, but at least wide enough for a typical number.</summary>
    private static int Width(string column) => Math.Max(column.Length, 8);

    private static string Lower(string name) => name.ToLowerInvariant();

    private static string I(long value) => value.ToString(CultureInfo.InvariantCulture);

    private static string F(double value, string format) => value.ToString(format, CultureInfo.InvariantCulture);
}
