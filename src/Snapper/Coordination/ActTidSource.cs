using Microsoft.Extensions.Options;
using Snapper.Hosting;

namespace Snapper.Coordination;

/// <summary>
/// Hands out ACT tids in this silo from a range reserved in advance at the cluster's tid sequencer (thesis §3.3.3.1), so
/// an ACT gets its tid without a message; only when the range is used up is the next one reserved (one reservation at a
/// time, the other callers wait for it). Tids are unique in the cluster because ranges never overlap; tids of one silo
/// increase, and ranges follow the wall clock (see <see cref="TidRanges"/>), so wait-die's "smaller is older"
/// holds across silos as far as the ranges go.
/// </summary>
internal sealed class ActTidSource(TidRanges ranges, IOptions<SnapperOptions> options)
{
    private readonly object _gate = new();
    private readonly int _rangeSize = options.Value.ActTidRangeSize;
    private long _next;
    private long _end;
    private Task? _refill;

    /// <summary>A new tid; a reservation that fails (the sequencer's silo is down) fails every caller waiting for it.</summary>
    public async ValueTask<long> NextAsync()
    {
        while (true)
        {
            Task refill;
            lock (_gate)
            {
                if (_next < _end)
                {
                    return _next++;
                }

                // A refill that completed (even synchronously, inside this lock: a master or worker reserves from its own
                // blocks) is done; only one still running is shared.
                refill = _refill is { IsCompleted: false } running ? running : _refill = RefillAsync();
            }

            await refill;
        }
    }

    private async Task RefillAsync()
    {
        var start = await ranges.ReserveAsync(_rangeSize);
        lock (_gate)
        {
            (_next, _end) = (start, start + _rangeSize);
        }
    }
}
