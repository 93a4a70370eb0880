using System.Diagnostics.Metrics;

namespace Snapper.Runner.Experiment;

/// <summary>
/// Listens to Snapper's write-ahead log counters on the embedded silo while one run is measured (bytes written,
/// group writes and how many of them were fsynced), and to the recovery time when a silo starts on a data folder.
/// </summary>
public sealed class LogStats : IDisposable
{
    private readonly MeterListener _listener = new();
    private long _bytes;
    private long _writes;
    private long _fsyncs;
    private volatile bool _recording;

    public LogStats()
    {
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Meter.Name == "Snapper" && instrument.Name.StartsWith("snapper.log.", StringComparison.Ordinal))
            {
                listener.EnableMeasurementEvents(instrument);
            }
        };
        _listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) =>
        {
            if (!_recording)
            {
                return;
            }

            if (instrument.Name == "snapper.log.bytes")
            {
                Interlocked.Add(ref _bytes, value);
                return;
            }

            Interlocked.Increment(ref _writes);
            foreach (var tag in tags)
            {
                if (tag is { Key: "fsync", Value: true })
                {
                    Interlocked.Increment(ref _fsyncs);
                }
            }
        });
        _listener.SetMeasurementEventCallback<double>((instrument, value, _, _) =>
        {
            if (instrument.Name == "snapper.log.recovery.duration")
            {
                LastRecoveryMs = value;
            }
        });
        _listener.Start();
    }

    /// <summary>The duration of the last recovery seen, in milliseconds (null if none).</summary>
    public double? LastRecoveryMs { get; private set; }

    /// <summary>Starts counting (at the first measured epoch).</summary>
    public void Record()
    {
        Interlocked.Exchange(ref _bytes, 0);
        Interlocked.Exchange(ref _writes, 0);
        Interlocked.Exchange(ref _fsyncs, 0);
        _recording = true;
    }

    /// <summary>Stops counting; returns log bytes and fsyncs per committed transaction (NaN when nothing was logged).</summary>
    public (double BytesPerTxn, double FsyncsPerTxn) PerTransaction(long committed)
    {
        _recording = false;
        return _writes == 0 || committed == 0
            ? (double.NaN, double.NaN)
            : ((double)Interlocked.Read(ref _bytes) / committed, (double)Interlocked.Read(ref _fsyncs) / committed);
    }

    public void Dispose() => _listener.Dispose();
}
