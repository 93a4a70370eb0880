using Snapper.Logging;

namespace Snapper.Coordination;

/// <summary>
/// Reserves disjoint, increasing tid ranges. The sequence is floored at the wall clock (milliseconds since
/// the Unix epoch times 65,536), so a sequencer that is reactivated after a crash continues above every
/// tid it handed out before, as long as it handed out fewer than 65,536 tids per millisecond on average;
/// and, with a write-ahead log, above every tid and bid the log holds, so that a new transaction can never
/// share an id with a logged one even if the clock went back.
/// </summary>
[KeepAlive]
[Cluster.MasterPlacement]
internal sealed class TidSequencerGrain(TimeProvider time, WriteAheadLog log) : Grain, ITidSequencerGrain
{
    private const int ClockShift = 16;
    private long _next = log.MaxId + 1;

    public Task<long> Reserve(int count)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(count, 1);
        var floor = time.GetUtcNow().ToUnixTimeMilliseconds() << ClockShift;
        var start = Math.Max(_next, floor);
        _next = start + count;
        return Task.FromResult(start);
    }
}
