using Microsoft.Extensions.Options;
using Snapper.Hosting;

namespace Snapper.Coordination;

/// <summary>
/// Hands out ACT tids from a range reserved in advance (thesis §3.3.3.1), so an ACT gets its tid without
/// waiting for anything else; only when the range is used up does the coordinator reserve the next one.
/// Tids of one coordinator increase; tids of different coordinators are unique because ranges never overlap.
/// </summary>
[KeepAlive]
internal sealed class CoordinatorGrain(IOptions<SnapperOptions> options) : Grain, ICoordinatorGrain
{
    private readonly int _rangeSize = options.Value.ActTidRangeSize;
    private long _next;
    private long _end;

    public async Task<TxnContext> NewAct(GrainId root)
    {
        if (_next == _end)
        {
            // Not reentrant: calls that arrive while the range is refilled queue behind this one.
            _next = await GrainFactory.GetGrain<ITidSequencerGrain>(0).Reserve(_rangeSize);
            _end = _next + _rangeSize;
        }

        return new TxnContext(_next++, TxnMode.Act, root);
    }
}
