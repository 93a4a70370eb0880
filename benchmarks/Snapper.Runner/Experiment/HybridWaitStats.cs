using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Globalization;

namespace Snapper.Runner.Experiment;

/// <summary>
/// Listens to Snapper's hybrid histograms on the embedded silo while one run is measured: how long sub-batches waited for
/// ACTs placed before them, how long ACTs waited to enter behind batches, and how long ACTs waited, locks held, for the
/// batches they read from to commit. Says where a hybrid run's transactions wait for each other. Against a running
/// cluster nothing is recorded here.
/// </summary>
public sealed class HybridWaitStats : IDisposable
{
    private static readonly (string Instrument, string Label)[] Waits =
    [
        ("snapper.hybrid.batch.wait_for_acts", "sub-batches behind ACTs"),
        ("snapper.hybrid.act.wait_for_batches", "ACTs entering behind batches"),
        ("snapper.hybrid.act.wait_for_commits", "ACTs waiting for batch commits"),
    ];

    private readonly MeterListener _listener = new();
    private readonly List<double>[] _waits = [.. Waits.Select(_ => new List<double>())];
    private readonly Stopwatch _clock = new();
    private volatile bool _recording;

    public HybridWaitStats()
    {
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Meter.Name == "Snapper" && Array.FindIndex(Waits, w => w.Instrument == instrument.Name) is var index and >= 0)
            {
                listener.EnableMeasurementEvents(instrument, _waits[index]);
            }
        };
        _listener.SetMeasurementEventCallback<double>((_, milliseconds, _, state) =>
        {
            if (_recording && state is List<double> waits)
            {
                lock (waits)
                {
                    waits.Add(milliseconds);
                }
            }
        });
        _listener.Start();
    }

    /// <summary>Starts recording (at the first measured epoch).</summary>
    public void Record()
    {
        _clock.Start();
        _recording = true;
    }

    /// <summary>
    /// A summary for the run's result line: per kind of wait, how many per second, their mean and p99, and the time
    /// spent waiting per second of the run; null if nothing waited (no hybrid run, or no conflict).
    /// </summary>
    public string? Summary()
    {
        _recording = false;
        var seconds = Math.Max(_clock.Elapsed.TotalSeconds, 1e-9);
        var parts = new List<string>();
        for (var i = 0; i < Waits.Length; i++)
        {
            double[] waits;
            lock (_waits[i])
            {
                waits = [.. _waits[i]];
            }

            if (waits.Length == 0)
            {
                continue;
            }

            Array.Sort(waits);
            parts.Add(string.Create(CultureInfo.InvariantCulture,
                $"{Waits[i].Label} {waits.Length / seconds:N0}/s mean {waits.Average():F2} p99 {waits[(int)(waits.Length * 0.99)]:F2} ms ({waits.Sum() / 1000 / seconds:F2} s/s)"));
        }

        return parts.Count == 0 ? null : "waits: " + string.Join("; ", parts);
    }

    public void Dispose() => _listener.Dispose();
}
