using System.Collections.Concurrent;
using System.Diagnostics.Metrics;

namespace Snapper.Runner.Experiment;

/// <summary>
/// Running totals of the silo's own counters: transactions (<c>snapper.txn.committed</c>, <c>.aborted</c>,
/// <c>.in_doubt</c>) by Snapper mode, and the bytes written to the write-ahead log. The client loops of a hybrid run
/// cannot tell whether a transaction ran as an ACT or a PACT; the silo's counters can. The log's bytes show whether
/// what each transaction costs the disk stays put over a long run.
/// </summary>
public sealed class SiloCounters : IDisposable
{
    /// <summary>The key of the write-ahead log's bytes.</summary>
    public const string LogBytes = "log.bytes";

    private const string Prefix = "snapper.txn.";
    private const string LogBytesInstrument = "snapper." + LogBytes;

    private readonly MeterListener _listener = new();
    private readonly ConcurrentDictionary<string, long> _totals = new(StringComparer.Ordinal);

    public SiloCounters()
    {
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Meter.Name == "Snapper" && (instrument.Name.StartsWith(Prefix, StringComparison.Ordinal) || instrument.Name == LogBytesInstrument))
            {
                listener.EnableMeasurementEvents(instrument);
            }
        };
        _listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) =>
        {
            if (instrument.Name == LogBytesInstrument)
            {
                _totals.AddOrUpdate(LogBytes, value, (_, total) => total + value);
                return;
            }

            var mode = "";
            foreach (var tag in tags)
            {
                if (tag.Key == "mode")
                {
                    mode = tag.Value?.ToString() ?? "";
                }
            }

            _totals.AddOrUpdate(Key(mode, instrument.Name[Prefix.Length..]), value, (_, total) => total + value);
        });
        _listener.Start();
    }

    /// <summary>The key of a total: a <see cref="TxnMode"/> name and an outcome (committed, aborted, in_doubt), lower case.</summary>
    public static string Key(string mode, string outcome) => $"{mode.ToLowerInvariant()}.{outcome}";

    /// <summary>The totals so far.</summary>
    public IReadOnlyDictionary<string, long> Read() => new Dictionary<string, long>(_totals, StringComparer.Ordinal);

    public void Dispose() => _listener.Dispose();
}
