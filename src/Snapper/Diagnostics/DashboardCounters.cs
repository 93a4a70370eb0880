using System.Collections.Concurrent;
using System.Diagnostics;
using System.Diagnostics.Metrics;
using Orleans.Runtime;

namespace Snapper.Diagnostics;

/// <summary>
/// Shows this silo's Snapper figures on Orleans' dashboard (Microsoft.Orleans.Dashboard), on each silo's "counters"
/// page beside Orleans' own.
/// </summary>
/// <remarks>
/// <para>
/// The dashboard reads counters only from meters named "Microsoft.Orleans", Orleans' own meter's name (its OpenTelemetry
/// reader subscribes to that name and no other), and keeps one number per instrument name, the last of its tagged points. Snapper's own instruments carry
/// tags (mode, abort reason) and histograms, so they are not mirrored as they are: this class listens to them and
/// publishes, on a meter of that name, one observable instrument per figure an operator reads, with the tag in the
/// name (<c>snapper.txn.aborted.WaitDie</c>). Cumulative figures are observable counters, whose dashboard delta is the
/// change per export; batch size and commit lag are the mean (and the largest lag) over the last completed window of
/// <see cref="Window"/>, so that any number of readers see the same values.
/// </para>
/// <para>
/// Only this silo's instruments are listened to (the meter of its own <see cref="SnapperMetrics"/>), so that silos
/// sharing a process (Orleans' test cluster) do not count each other's transactions. The listener starts when the silo
/// builds its lifecycle, before the write-ahead log recovers, so that the recovery time is caught.
/// </para>
/// </remarks>
internal sealed class DashboardCounters : ILifecycleParticipant<ISiloLifecycle>, IDisposable
{
    /// <summary>The meter name Orleans' dashboard subscribes to.</summary>
    public const string DashboardMeterName = "Microsoft.Orleans";

    /// <summary>Span over which batch sizes and commit lags are averaged.</summary>
    public static readonly TimeSpan Window = TimeSpan.FromSeconds(5);

    private readonly Meter _dashboardMeter;
    private readonly MeterListener _listener = new();
    private readonly ConcurrentDictionary<string, long> _totals = new(StringComparer.Ordinal);
    private readonly TimeProvider _time;
    private readonly bool _ownsMeter;
    private readonly object _windowLock = new();
    private WindowFigures _current = new();
    private WindowFigures _completed = new();
    private long _windowStart;
    private double _lastRecoveryMs;
    private double _lastCheckpointMs;

    public DashboardCounters(SnapperMetrics metrics, TimeProvider time, IMeterFactory? meterFactory = null)
    {
        // From the silo's meter factory, the meter is the very one Orleans publishes its own instruments on (the factory
        // hands out one meter per name); the factory owns it.
        _dashboardMeter = meterFactory?.Create(DashboardMeterName) ?? new Meter(DashboardMeterName);
        _ownsMeter = meterFactory is null;
        _time = time;
        _windowStart = time.GetTimestamp();
        Publish();

        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (ReferenceEquals(instrument.Meter, metrics.Meter))
            {
                listener.EnableMeasurementEvents(instrument);
            }
        };
        _listener.SetMeasurementEventCallback<long>(OnLong);
        _listener.SetMeasurementEventCallback<int>((instrument, value, tags, state) => OnLong(instrument, value, tags, state));
        _listener.SetMeasurementEventCallback<double>(OnDouble);
        _listener.Start();
    }

    /// <summary>The meter the dashboard reads; tests listen to it.</summary>
    internal Meter DashboardMeter => _dashboardMeter;

    public void Participate(ISiloLifecycle lifecycle)
    {
        // Nothing to run at a stage: being a participant makes the silo construct this class as it starts.
    }

    public void Dispose()
    {
        _listener.Dispose();
        if (_ownsMeter)
        {
            _dashboardMeter.Dispose();
        }
    }

    private void Publish()
    {
        foreach (var mode in Enum.GetValues<TxnMode>())
        {
            Cumulative($"snapper.txn.committed.{mode}", $"{mode}s committed on this silo.");
        }

        foreach (var reason in Enum.GetValues<AbortReason>())
        {
            Cumulative($"snapper.txn.aborted.{reason}", $"Transactions aborted with reason {reason} on this silo.");
        }

        Cumulative("snapper.txn.in_doubt", "Transactions whose commit record could not be confirmed durable.");
        Cumulative("snapper.pact.batches", "PACT batches emitted by this silo.");
        Cumulative("snapper.log.bytes", "Bytes written to the write-ahead log.", "By");
        Cumulative("snapper.log.flushes", "Write-ahead log group writes.");
        Cumulative("snapper.log.fsyncs", "Write-ahead log group writes that were fsynced.");

        _dashboardMeter.CreateObservableGauge("snapper.pact.batch.size.mean", () => Completed().MeanBatchSize,
            "{transaction}", $"Mean PACTs per emitted batch over the last {Window.TotalSeconds:0} s.");
        _dashboardMeter.CreateObservableGauge("snapper.pact.batch.commit_lag.mean", () => Completed().MeanCommitLag,
            "ms", $"Mean time from a batch's emission to its commit over the last {Window.TotalSeconds:0} s.");
        _dashboardMeter.CreateObservableGauge("snapper.pact.batch.commit_lag.max", () => Completed().MaxCommitLag,
            "ms", $"Longest time from a batch's emission to its commit over the last {Window.TotalSeconds:0} s.");
        _dashboardMeter.CreateObservableGauge("snapper.log.recovery.duration", () => Volatile.Read(ref _lastRecoveryMs),
            "ms", "Time the last recovery took at silo start; 0 before one (or without a log).");
        _dashboardMeter.CreateObservableGauge("snapper.log.checkpoint.duration", () => Volatile.Read(ref _lastCheckpointMs),
            "ms", "Time the last checkpoint took; 0 before the first.");
    }

    private void Cumulative(string name, string description, string? unit = null) =>
        _dashboardMeter.CreateObservableCounter(name, () => _totals.GetValueOrDefault(name), unit, description);

    private void Add(string name, long value) => _totals.AddOrUpdate(name, value, (_, total) => total + value);

    private void OnLong(Instrument instrument, long value, ReadOnlySpan<KeyValuePair<string, object?>> tags, object? state)
    {
        switch (instrument.Name)
        {
            case "snapper.txn.committed":
                Add($"snapper.txn.committed.{Tag(tags, "mode")}", value);
                break;
            case "snapper.txn.aborted":
                Add($"snapper.txn.aborted.{Tag(tags, "reason")}", value);
                break;
            case "snapper.txn.in_doubt":
                Add("snapper.txn.in_doubt", value);
                break;
            case "snapper.log.bytes":
                Add("snapper.log.bytes", value);
                break;
            case "snapper.log.flushes":
                Add("snapper.log.flushes", value);
                if (Tag(tags, "fsync") == bool.TrueString)
                {
                    Add("snapper.log.fsyncs", value);
                }

                break;
            case "snapper.pact.batch.size":
                Add("snapper.pact.batches", 1);
                lock (_windowLock)
                {
                    Rotate();
                    _current.Batches++;
                    _current.BatchedPacts += value;
                }

                break;
        }
    }

    private void OnDouble(Instrument instrument, double value, ReadOnlySpan<KeyValuePair<string, object?>> tags, object? state)
    {
        switch (instrument.Name)
        {
            case "snapper.pact.batch.commit_lag":
                lock (_windowLock)
                {
                    Rotate();
                    _current.Commits++;
                    _current.CommitLagSum += value;
                    _current.CommitLagMax = Math.Max(_current.CommitLagMax, value);
                }

                break;
            case "snapper.log.recovery.duration":
                Volatile.Write(ref _lastRecoveryMs, Math.Round(value, 2));
                break;
            case "snapper.log.checkpoint.duration":
                Volatile.Write(ref _lastCheckpointMs, Math.Round(value, 2));
                break;
        }
    }

    private WindowFigures Completed()
    {
        lock (_windowLock)
        {
            Rotate();
            return _completed;
        }
    }

    /// <summary>Ends the current window once it is <see cref="Window"/> old; a window with nothing in it reads as zero.</summary>
    private void Rotate()
    {
        Debug.Assert(Monitor.IsEntered(_windowLock));
        var elapsed = _time.GetElapsedTime(_windowStart);
        if (elapsed < Window)
        {
            return;
        }

        // Two windows or more without a measurement: the last completed one was empty.
        _completed = elapsed < 2 * Window ? _current : new WindowFigures();
        _current = new WindowFigures();
        _windowStart = _time.GetTimestamp();
    }

    private static string Tag(ReadOnlySpan<KeyValuePair<string, object?>> tags, string key)
    {
        foreach (var tag in tags)
        {
            if (tag.Key == key)
            {
                return tag.Value?.ToString() ?? "";
            }
        }

        return "";
    }

    private sealed class WindowFigures
    {
        public long Batches;
        public long BatchedPacts;
        public long Commits;
        public double CommitLagSum;
        public double CommitLagMax;

        // Rounded: the dashboard prints a number as it gets it, and digits past the hundredth are noise to a reader.
        public double MeanBatchSize => Batches == 0 ? 0 : Math.Round((double)BatchedPacts / Batches, 2);

        public double MeanCommitLag => Commits == 0 ? 0 : Math.Round(CommitLagSum / Commits, 2);

        public double MaxCommitLag => Math.Round(CommitLagMax, 2);
    }
}
