using System.Collections.Concurrent;
using System.Diagnostics.Metrics;

namespace Snapper.Runner.Experiment;

/// <summary>
/// Running totals of the silo's own transaction counters (<c>snapper.txn.committed</c>, <c>.aborted</c>,
/// <c>.in_doubt</c>) by Snapper mode. The client loops of a hybrid run cannot tell whether a transaction ran as an
/// ACT or a PACT; the silo's counters can.
/// </summary>
public sealed class SiloTxnCounts : IDisposable
{
    private const string Prefix = "snapper.txn.";

    private readonly MeterListener _listener = new();
    private readonly ConcurrentDictionary<string, long> _totals = new(StringComparer.Ordinal);

    public SiloTxnCounts()
    {
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Meter.Name == "Snapper" && instrument.Name.StartsWith(Prefix, StringComparison.Ordinal))
            {
                listener.EnableMeasurementEvents(instrument);
            }
        };
        _listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) =>
        {
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
