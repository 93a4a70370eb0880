using System.Diagnostics.Metrics;

namespace Snapper.Diagnostics;

/// <summary>
/// Snapper's counters, on the meter "Snapper" (visible to dotnet-counters and OpenTelemetry):
/// committed and aborted transactions (by mode and reason), the 2PC messages sent, and for PACTs the batch
/// sizes and how long batches take from emission to commit; for hybrid execution, how long batches and ACTs wait for each
/// other; and, as gauges named <c>snapper.entries.*</c>, the sizes
/// of every map the silo keeps for as long as it runs, so that a soak run (or an operator) sees they stay flat.
/// </summary>
internal sealed class SnapperMetrics
{
    public const string MeterName = SnapperMeter.Name;

    // The "mode" tag made once: every commit adds one, and naming an enum value boxes it.
    private static readonly KeyValuePair<string, object?> ActTag = new("mode", nameof(TxnMode.Act));
    private static readonly KeyValuePair<string, object?> PactTag = new("mode", nameof(TxnMode.Pact));
    private static readonly KeyValuePair<string, object?> LocalCallTag = new("kind", "call");
    private static readonly KeyValuePair<string, object?> LocalPrepareTag = new("kind", "prepare");
    private static readonly KeyValuePair<string, object?> LocalCommitTag = new("kind", "commit");

    private readonly Counter<long> _committed;
    private readonly Counter<long> _aborted;
    private readonly Counter<long> _inDoubt;
    private readonly Counter<long> _prepares;
    private readonly Counter<long> _commits;
    private readonly Counter<long> _localCalls;
    private readonly Histogram<int> _batchSize;
    private readonly Histogram<double> _batchCommitLag;
    private readonly Histogram<double> _orderingWait;
    private readonly Histogram<double> _batchExecution;
    private readonly Counter<long> _logBytes;
    private readonly Counter<long> _logFlushes;
    private readonly Histogram<double> _recoveryDuration;
    private readonly Histogram<double> _checkpointDuration;
    private readonly Histogram<double> _batchWaitForActs;
    private readonly Histogram<double> _actWaitForBatches;
    private readonly Histogram<double> _actWaitForCommits;
    private readonly UpDownCounter<long> _actsWaitingForBatches;
    private readonly UpDownCounter<long> _actsWaitingForCommits;
    private readonly Meter _meter;

    public SnapperMetrics(IMeterFactory? meterFactory = null)
    {
        var meter = _meter = meterFactory?.Create(MeterName) ?? new Meter(MeterName);
        _committed = meter.CreateCounter<long>("snapper.txn.committed", description: "Committed transactions.");
        _aborted = meter.CreateCounter<long>("snapper.txn.aborted", description: "Aborted transactions, by reason.");
        _inDoubt = meter.CreateCounter<long>("snapper.txn.in_doubt", description: "Transactions whose commit record could not be confirmed durable.");
        _prepares = meter.CreateCounter<long>("snapper.act.prepare.sent", description: "2PC prepare messages sent.");
        _commits = meter.CreateCounter<long>("snapper.act.commit.sent", description: "2PC commit messages sent.");
        _localCalls = meter.CreateCounter<long>("snapper.calls.local",
            description: "Calls inside transactions, 2PC prepares and 2PC commits (tag kind) that an actor of this silo ran for another one of this silo directly on its activation: Orleans' own call metrics do not see them.");
        _batchSize = meter.CreateHistogram<int>("snapper.pact.batch.size", unit: "{transaction}", description: "PACTs per emitted batch.");
        _logBytes = meter.CreateCounter<long>("snapper.log.bytes", unit: "By", description: "Bytes written to the write-ahead log.");
        _logFlushes = meter.CreateCounter<long>("snapper.log.flushes", description: "Write-ahead log group writes, by whether they were fsynced.");
        _recoveryDuration = meter.CreateHistogram<double>("snapper.log.recovery.duration", unit: "ms", description: "Time recovery took to read the checkpoint and the log at silo start.");
        _checkpointDuration = meter.CreateHistogram<double>("snapper.log.checkpoint.duration", unit: "ms", description: "Time a checkpoint of the write-ahead log took.");
        _batchCommitLag = meter.CreateHistogram<double>("snapper.pact.batch.commit_lag", unit: "ms", description: "Time from a batch's emission to its commit.");
        _orderingWait = meter.CreateHistogram<double>("snapper.pact.ordering_wait", unit: "ms",
            description: "Time a PACT waited from its submission until the token emitted it in a batch.");
        _batchExecution = meter.CreateHistogram<double>("snapper.pact.batch.execution", unit: "ms",
            description: "Time from a batch's emission until its last actor finished its sub-batch (the rest of the commit lag is waiting for earlier batches and the commit record).");
        _batchWaitForActs = meter.CreateHistogram<double>("snapper.hybrid.batch.wait_for_acts", unit: "ms",
            description: "Time a sub-batch, free to start on its actor otherwise, waited for the ACTs placed before it there to end.");
        _actWaitForBatches = meter.CreateHistogram<double>("snapper.hybrid.act.wait_for_batches", unit: "ms",
            description: "Time an ACT waited to enter an actor until the batch it was placed after had completed there.");
        _actWaitForCommits = meter.CreateHistogram<double>("snapper.hybrid.act.wait_for_commits", unit: "ms",
            description: "Time an ACT, voted and checked, waited with its locks held for the batches it read from to commit (the commit rule; with a log, for this silo's batches, until their commit records are queued ahead of its own).");
        _actsWaitingForBatches = meter.CreateUpDownCounter<long>("snapper.hybrid.act.waiting_for_batches", unit: "{transaction}",
            description: "ACTs waiting now to enter an actor behind a batch.");
        _actsWaitingForCommits = meter.CreateUpDownCounter<long>("snapper.hybrid.act.waiting_for_commits", unit: "{transaction}",
            description: "ACTs waiting now, locks held, for the batches they read from to commit.");
    }

    /// <summary>This silo's meter, so that a listener can tell its instruments from another silo's in the same process.</summary>
    public Meter Meter => _meter;

    public void Committed(TxnMode mode) => _committed.Add(1, ModeTag(mode));

    /// <summary>Publishes the size of a long-lived map as the gauge <c>snapper.entries.{name}</c>.</summary>
    public void ObserveEntries(string name, string description, Func<long> count) =>
        _meter.CreateObservableGauge($"snapper.entries.{name}", count, unit: "{entry}", description: description);

    public void InDoubt(TxnMode mode) => _inDoubt.Add(1, ModeTag(mode));

    public void Aborted(TxnMode mode, AbortReason reason) => _aborted.Add(
        1, ModeTag(mode), new KeyValuePair<string, object?>("reason", reason.ToString()));

    private static KeyValuePair<string, object?> ModeTag(TxnMode mode) => mode == TxnMode.Pact ? PactTag : ActTag;

    public void PreparesSent(int count) => _prepares.Add(count);

    public void CommitsSent(int count) => _commits.Add(count);

    /// <summary>A call inside a transaction ran as a local call (see <c>TransactionalActor.LocalCalls.cs</c>).</summary>
    public void LocalCallRan() => _localCalls.Add(1, LocalCallTag);

    /// <summary>A 2PC prepare ran as a local call.</summary>
    public void LocalPrepareRan() => _localCalls.Add(1, LocalPrepareTag);

    /// <summary>A 2PC commit ran as a local call.</summary>
    public void LocalCommitRan() => _localCalls.Add(1, LocalCommitTag);

    public void Recovered(TimeSpan elapsed, long bytes) =>
        _recoveryDuration.Record(elapsed.TotalMilliseconds, new KeyValuePair<string, object?>("bytes", bytes));

    public void Checkpointed(TimeSpan elapsed) => _checkpointDuration.Record(elapsed.TotalMilliseconds);

    public void LogFlushed(long bytes, bool fsync)
    {
        _logBytes.Add(bytes);
        _logFlushes.Add(1, new KeyValuePair<string, object?>("fsync", fsync));
    }

    public void BatchEmitted(int pacts) => _batchSize.Record(pacts);

    public void BatchCommitted(TimeSpan lag) => _batchCommitLag.Record(lag.TotalMilliseconds);

    /// <summary>A PACT submitted at <paramref name="since"/> (<see cref="System.Diagnostics.Stopwatch"/> ticks) was emitted in a batch now.</summary>
    public void PactOrdered(long since)
    {
        if (_orderingWait.Enabled)
        {
            _orderingWait.Record(System.Diagnostics.Stopwatch.GetElapsedTime(since).TotalMilliseconds);
        }
    }

    /// <summary>The last actor of a batch emitted at <paramref name="emittedAt"/> finished its sub-batch.</summary>
    public void BatchExecuted(long emittedAt) => _batchExecution.Record(System.Diagnostics.Stopwatch.GetElapsedTime(emittedAt).TotalMilliseconds);

    /// <summary>A sub-batch started after waiting for ACTs since <paramref name="since"/> (<see cref="System.Diagnostics.Stopwatch"/> ticks).</summary>
    public void BatchWaitedForActs(long since) => _batchWaitForActs.Record(System.Diagnostics.Stopwatch.GetElapsedTime(since).TotalMilliseconds);

    /// <summary>An ACT starts waiting to enter an actor behind a batch; returns when (pass it to <see cref="ActWaitedForBatches"/>).</summary>
    public long ActWaitsForBatches()
    {
        _actsWaitingForBatches.Add(1);
        return System.Diagnostics.Stopwatch.GetTimestamp();
    }

    /// <summary>The wait that began at <paramref name="since"/> ended; <paramref name="entered"/>: the ACT got in (else it gave way).</summary>
    public void ActWaitedForBatches(long since, bool entered)
    {
        _actsWaitingForBatches.Add(-1);
        if (entered)
        {
            _actWaitForBatches.Record(System.Diagnostics.Stopwatch.GetElapsedTime(since).TotalMilliseconds);
        }
    }

    /// <summary>An ACT starts waiting for the batches it read from to commit; returns when (pass it to <see cref="ActWaitedForCommits"/>).</summary>
    public long ActWaitsForCommits()
    {
        _actsWaitingForCommits.Add(1);
        return System.Diagnostics.Stopwatch.GetTimestamp();
    }

    /// <summary>The wait that began at <paramref name="since"/> ended, whatever the batches' outcome.</summary>
    public void ActWaitedForCommits(long since)
    {
        _actsWaitingForCommits.Add(-1);
        _actWaitForCommits.Record(System.Diagnostics.Stopwatch.GetElapsedTime(since).TotalMilliseconds);
    }
}
