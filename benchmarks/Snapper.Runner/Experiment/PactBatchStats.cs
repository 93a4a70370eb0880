using System.Diagnostics.Metrics;

namespace Snapper.Runner.Experiment;

/// <summary>
/// Listens to Snapper's PACT histograms on the embedded silo while one run is measured: PACTs per batch, and where a
/// PACT's time goes: waiting for the token (submission to emission), a batch's execution (emission until its last actor
/// finished) and its commit lag (emission to commit, which adds waiting for earlier batches and the commit record).
/// Against a running cluster nothing is recorded here.
/// </summary>
public sealed class PactBatchStats : IDisposable
{
    private const string OrderingWait = "snapper.pact.ordering_wait";
    private const string Execution = "snapper.pact.batch.execution";
    private const string CommitLag = "snapper.pact.batch.commit_lag";

    private readonly MeterListener _listener = new();
    private readonly Dictionary<string, List<double>> _samples = new()
    {
        [OrderingWait] = new(),
        [Execution] = new(),
        [CommitLag] = new(),
    };

    private readonly object _gate = new();
    private long _batches;
    private long _pacts;
    private volatile bool _recording;

    public PactBatchStats()
    {
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Meter.Name == "Snapper" && (instrument.Name == "snapper.pact.batch.size" || _samples.ContainsKey(instrument.Name)))
            {
                listener.EnableMeasurementEvents(instrument, _samples.GetValueOrDefault(instrument.Name));
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
        _listener.SetMeasurementEventCallback<double>((_, milliseconds, _, samples) =>
        {
            if (_recording && samples is List<double> list)
            {
                lock (_gate)
                {
                    list.Add(milliseconds);
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
        if (_batches == 0)
        {
            return null;
        }

        var parts = new List<string> { $"{_pacts / (double)_batches:F1} PACTs per batch" };
        foreach (var (name, label) in new[] { (OrderingWait, "token wait"), (Execution, "batch execution"), (CommitLag, "batch commit lag") })
        {
            double[] sorted;
            lock (_gate)
            {
                sorted = [.. _samples[name]];
            }

            if (sorted.Length > 0)
            {
                Array.Sort(sorted);
                parts.Add($"{label} p50 {ExperimentRunner.Percentile(sorted, 0.50):F2} ms p99 {ExperimentRunner.Percentile(sorted, 0.99):F2} ms");
            }
        }

        return string.Join(", ", parts);
    }

    public void Dispose() => _listener.Dispose();
}
