using System.Collections.Concurrent;

namespace Snapper.Runner.Experiment;

/// <summary>
/// Running totals of one mode's client loops during a soak. A soak keeps no per-transaction record (half an hour of
/// latencies would grow the very heap it watches): each minute's row is the difference of two readings.
/// </summary>
internal sealed class ModeCounters
{
    private readonly ConcurrentDictionary<string, long> _abortsByReason = new(StringComparer.Ordinal);
    private long _committed;
    private long _aborted;
    private long _latencyTicks;

    public void Commit(TimeSpan latency)
    {
        Interlocked.Add(ref _latencyTicks, latency.Ticks);
        Interlocked.Increment(ref _committed);
    }

    public void Abort(string reason)
    {
        _abortsByReason.AddOrUpdate(reason, 1, (_, count) => count + 1);
        Interlocked.Increment(ref _aborted);
    }

    /// <summary>The totals so far; loops keep running, so the fields may be a transaction apart, which a minute's row does not notice.</summary>
    public ModeTotals Read() => new(
        Interlocked.Read(ref _committed),
        Interlocked.Read(ref _aborted),
        TimeSpan.FromTicks(Interlocked.Read(ref _latencyTicks)),
        new Dictionary<string, long>(_abortsByReason, StringComparer.Ordinal));
}
