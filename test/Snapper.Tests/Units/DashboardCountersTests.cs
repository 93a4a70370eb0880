using System.Diagnostics.Metrics;
using Snapper.Diagnostics;
using Xunit;

namespace Snapper.Tests.Units;

/// <summary>
/// Snapper's figures as Orleans' dashboard reads them: one untagged instrument per figure on a meter named "Microsoft.Orleans",
/// fed only by the silo's own Snapper meter, windows of batch figures turned by a clock the test moves.
/// </summary>
public sealed class DashboardCountersTests
{
    [Fact]
    public void Figures_reach_the_dashboard_meter_one_instrument_per_mode_and_reason()
    {
        var clock = new SteppedClock();
        using var metrics = new MetricsScope();
        using var other = new MetricsScope();
        using var counters = new DashboardCounters(metrics.Metrics, clock);

        metrics.Metrics.Committed(TxnMode.Act);
        metrics.Metrics.Committed(TxnMode.Pact);
        metrics.Metrics.Committed(TxnMode.Pact);
        metrics.Metrics.Aborted(TxnMode.Act, AbortReason.WaitDie);
        metrics.Metrics.Aborted(TxnMode.Act, AbortReason.WaitDie);
        metrics.Metrics.Aborted(TxnMode.Pact, AbortReason.UndeclaredAccess);
        metrics.Metrics.LogFlushed(100, fsync: true);
        metrics.Metrics.LogFlushed(50, fsync: false);
        metrics.Metrics.Recovered(TimeSpan.FromMilliseconds(12), 4096);

        // Another silo's meter in the same process counts nowhere here.
        other.Metrics.Committed(TxnMode.Act);
        other.Metrics.Aborted(TxnMode.Act, AbortReason.WaitDie);

        var read = Read(counters);
        Assert.Equal(1, read["snapper.txn.committed.Act"]);
        Assert.Equal(2, read["snapper.txn.committed.Pact"]);
        Assert.Equal(2, read["snapper.txn.aborted.WaitDie"]);
        Assert.Equal(1, read["snapper.txn.aborted.UndeclaredAccess"]);
        Assert.Equal(0, read["snapper.txn.aborted.UserException"]);
        Assert.Equal(150, read["snapper.log.bytes"]);
        Assert.Equal(2, read["snapper.log.flushes"]);
        Assert.Equal(1, read["snapper.log.fsyncs"]);
        Assert.Equal(12, read["snapper.log.recovery.duration"]);
        Assert.DoesNotContain(read.Keys, name => name == "snapper.txn.committed" || name == "snapper.txn.aborted");
    }

    [Fact]
    public void Batch_size_and_commit_lag_are_those_of_the_last_completed_window()
    {
        var clock = new SteppedClock();
        using var metrics = new MetricsScope();
        using var counters = new DashboardCounters(metrics.Metrics, clock);

        metrics.Metrics.BatchEmitted(2);
        metrics.Metrics.BatchEmitted(4);
        metrics.Metrics.BatchCommitted(TimeSpan.FromMilliseconds(1));
        metrics.Metrics.BatchCommitted(TimeSpan.FromMilliseconds(3));

        // The window is still open: nothing completed yet.
        var open = Read(counters);
        Assert.Equal(0, open["snapper.pact.batch.size.mean"]);
        Assert.Equal(2, open["snapper.pact.batches"]);

        clock.Advance(DashboardCounters.Window);
        var first = Read(counters);
        Assert.Equal(3, first["snapper.pact.batch.size.mean"]);
        Assert.Equal(2, first["snapper.pact.batch.commit_lag.mean"]);
        Assert.Equal(3, first["snapper.pact.batch.commit_lag.max"]);

        // Reading again in the same window changes nothing (several readers see the same figures).
        Assert.Equal(3, Read(counters)["snapper.pact.batch.size.mean"]);

        // Two windows without a batch: the last completed one was empty.
        clock.Advance(2 * DashboardCounters.Window);
        var idle = Read(counters);
        Assert.Equal(0, idle["snapper.pact.batch.size.mean"]);
        Assert.Equal(0, idle["snapper.pact.batch.commit_lag.max"]);
        Assert.Equal(2, idle["snapper.pact.batches"]);
    }

    /// <summary>Takes one reading of every instrument on the counters' dashboard meter, as an exporter would.</summary>
    private static Dictionary<string, double> Read(DashboardCounters counters)
    {
        var values = new Dictionary<string, double>(StringComparer.Ordinal);
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (ReferenceEquals(instrument.Meter, counters.DashboardMeter))
            {
                Assert.Equal(DashboardCounters.DashboardMeterName, instrument.Meter.Name);
                l.EnableMeasurementEvents(instrument);
            }
        };
        listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) =>
        {
            Assert.Equal(0, tags.Length);
            values[instrument.Name] = value;
        });
        listener.SetMeasurementEventCallback<double>((instrument, value, tags, _) =>
        {
            Assert.Equal(0, tags.Length);
            values[instrument.Name] = value;
        });
        listener.Start();
        listener.RecordObservableInstruments();
        return values;
    }

    private sealed class MetricsScope : IDisposable
    {
        public SnapperMetrics Metrics { get; } = new();

        public void Dispose() => Metrics.Meter.Dispose();
    }

    /// <summary>A clock that moves only when told to, in whole ticks of one per millisecond.</summary>
    private sealed class SteppedClock : TimeProvider
    {
        private long _now = 1_000;

        public override long TimestampFrequency => 1_000;

        public override long GetTimestamp() => _now;

        public void Advance(TimeSpan by) => _now += (long)by.TotalMilliseconds;
    }
}
