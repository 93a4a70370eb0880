using System.Diagnostics.Metrics;

namespace Snapper.Runner.Experiment;

/// <summary>
/// Listens to Snapper's PACT histograms on the embedded silo while one run is measured: PACTs per batch and the
/// lag from a batch's emission to its commit. Against a running cluster nothing is recorded here.
/// </summary>
public sealed class PactBatchStats : IDisposable
{
    private readonly MeterListener _listener = new();
    private readonly List<double> _commitLags = new();
    private readonly object _gate = new();
    private long _batches;
    private long _pacts;
    private volatile bool _recording;

    public PactBatchStats()
    {
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Meter.Name == "Snapper" && instrument.Name is "snapper.pact.batch.size" or "snapper.pact.batch.commit_lag")
            {
                listener.EnableMeasurementEvents(instrument);
            }
        };
        _listener.SetMeasurementEventCallback<int>((_, size, _, _) =>
        {
            if (_recording)
            {
                Interlocked.Increment(ref _batches);
                Interlocked.Add(ref _pacts, size);
            }
        });
        _listener.SetMeasurementEventCallback<double>((_, lag, _, _) =>
        {
            if (_recording)
            {
                lock (_gate)
                {
                    _commitLags.Add(lag);
                }
            }
        });
        _listener.Start();
    }

    /// <summary>Starts recording (at the first measured epoch).</summary>
    public void Record() => _recording = true;

    /// <summary>A summary for the run's result line, or null if no PACT batch was seen.</summary>
    public string? Summary()
    {
        _recording = false;
        double[] lags;
        lock (_gate)
        {
            lags = [.. _commitLags];
        }

        if (_batches == 0 || lags.Length == 0)
        {
            return null;
        }

        Array.Sort(lags);
        return $"{_pacts / (double)_batches:F1} PACTs per batch, batch commit lag p50 {lags[lags.Length / 2]:F2} ms p99 {lags[(int)(lags.Length * 0.99)]:F2} ms";
    }

    public void Dispose() => _listener.Dispose();
}
