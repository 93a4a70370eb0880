using System.Diagnostics.Metrics;

namespace Snapper.Runner.Experiment;

/// <summary>
/// Reads the embedded silo's <c>snapper.entries.*</c> gauges: the sizes of the maps Snapper keeps for as long as the
/// silo runs (actor schedules, doom marks, uncommitted batches, aborted ranges, actors,
/// open commits). Gauges are only measured when asked, so each reading observes them all at that moment.
/// </summary>
public sealed class EntryGauges : IDisposable
{
    public const string Prefix = "snapper.entries.";

    private readonly MeterListener _listener = new();
    private readonly Dictionary<string, long> _reading = new(StringComparer.Ordinal);
    private readonly object _gate = new();

    public EntryGauges()
    {
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Meter.Name == "Snapper" && instrument.Name.StartsWith(Prefix, StringComparison.Ordinal))
            {
                listener.EnableMeasurementEvents(instrument);
            }
        };
        _listener.SetMeasurementEventCallback<long>((instrument, value, _, _) => Add(instrument.Name, value));
        _listener.SetMeasurementEventCallback<int>((instrument, value, _, _) => Add(instrument.Name, value));
        _listener.Start();
    }

    /// <summary>Every gauge now, by its name without the prefix ("pact.schedules"), in name order.</summary>
    public IReadOnlyDictionary<string, long> Read()
    {
        // The callbacks run on this thread, inside RecordObservableInstruments, so the lock spans the whole reading.
        lock (_gate)
        {
            _reading.Clear();
            _listener.RecordObservableInstruments();
            return new SortedDictionary<string, long>(_reading, StringComparer.Ordinal);
        }
    }

    public void Dispose() => _listener.Dispose();

    private void Add(string instrument, long value)
    {
        // A name published twice (two silos in one process) is one map per silo: the process holds their sum.
        var name = instrument[Prefix.Length..];
        _reading[name] = _reading.GetValueOrDefault(name) + value;
    }
}
