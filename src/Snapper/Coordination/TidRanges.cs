using Microsoft.Extensions.Options;
using Snapper.Hosting;
using Snapper.Logging;

namespace Snapper.Coordination;

/// <summary>
/// Reserves ranges of consecutive transaction ids for this silo's PACT ring, ACT tid source and, on a master, global
/// ordering. An embedded silo asks the cluster's one <see cref="TidSequencerGrain"/> (any number of embedded silos share
/// it). A master or worker cuts ranges from blocks of its own, so no silo needs another to hand out ids: a worker keeps
/// ordering local PACTs and starting ACTs while the master is down.
/// </summary>
/// <remarks>
/// A block id is <c>(time unit &lt;&lt; 26) | (slot &lt;&lt; 19) | offset</c>: the time unit is 10 ms since 2025-01-01
/// (37 bits: until about 2068), the slot is the silo's role (master 0, worker k is k + 1, so 7 bits hold 64 workers), and
/// the offset numbers the 524,288 ids of the block. Ids are unique across silos because slots differ, increase within a
/// silo because each new block starts at a later unit than the last one, and continue above every id in the silo's log
/// after a restart (and above the clock, so a restart without a log does not reuse ids other silos may still remember).
/// Across silos they follow the wall clock to 10 ms, which is what wait-die's "smaller is older" needs of them.
/// </remarks>
internal sealed class TidRanges(IOptions<SnapperOptions> options, IGrainFactory grains, WriteAheadLog log, TimeProvider time)
{
    private const int SlotShift = 19;
    private const int UnitShift = 26;
    private const long BlockSize = 1L << SlotShift;
    private static readonly DateTimeOffset Epoch = new(2025, 1, 1, 0, 0, 0, TimeSpan.Zero);

    private readonly object _gate = new();
    private readonly SnapperOptions _options = options.Value;
    private long _unit = -1;
    private long _next;
    private long _end;

    /// <summary>The first of <paramref name="count"/> consecutive ids no other reservation in the cluster gets.</summary>
    public async ValueTask<long> ReserveAsync(int count)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(count, 1);
        if (_options.Role == SiloRole.Embedded)
        {
            return await grains.GetGrain<ITidSequencerGrain>(0).Reserve(count);
        }

        ArgumentOutOfRangeException.ThrowIfGreaterThan(count, BlockSize);
        lock (_gate)
        {
            if (_next + count > _end)
            {
                var now = (time.GetUtcNow() - Epoch).Ticks / TimeSpan.TicksPerMillisecond / 10;
                _unit = Math.Max(Math.Max(_unit + 1, now), (log.MaxId >> UnitShift) + 1);
                var slot = _options.Role == SiloRole.Master ? 0 : _options.WorkerIndex + 1;
                _next = (_unit << UnitShift) | ((long)slot << SlotShift);
                _end = _next + BlockSize;
            }

            var start = _next;
            _next += count;
            return start;
        }
    }
}
