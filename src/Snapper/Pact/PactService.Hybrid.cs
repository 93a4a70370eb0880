using Snapper.Cluster;
using Snapper.Hybrid;

namespace Snapper.Pact;

/// <summary>
/// What the hybrid check needs of this silo's batches beyond bids: each batch's position in the order all workers'
/// batches are compared in (<see cref="BatchPosition"/>), and how far other workers have resolved theirs.
/// </summary>
/// <remarks>
/// Invariant: positions are handed out by the token holder under <see cref="_gate"/>, in bid order (<see cref="Register"/>),
/// so a later batch of this silo always has a larger position.
/// </remarks>
internal sealed partial class PactService
{
    // Other workers' resolved bids as last heard (piggybacked on call responses and votes), index = worker.
    private readonly long[] _resolvedOnWorker = Enumerable.Repeat(-1L, 64).ToArray();
    private long _lastStamp;

    /// <summary>This silo's worker index (0 on an embedded silo).</summary>
    public int WorkerIndex => _workerIndex;

    public BatchPosition EmissionFrontier()
    {
        if (!IsClustered)
        {
            var last = Volatile.Read(ref _lastBid);
            return last < 0 ? BatchPosition.None : BatchPosition.Embedded(last);
        }

        lock (_gate)
        {
            // A later local batch gets a larger stamp than this (the stamp is raised here, so a wall clock that steps back
            // cannot break that), and a later global part a larger gbid than the last one emitted here.
            _lastStamp = Math.Max(_lastStamp, DateTime.UtcNow.Ticks - 1);
            return BatchPosition.Local(_lastGlobalEmitted, _lastStamp, _workerIndex, long.MaxValue);
        }
    }

    /// <summary>The position of a batch emitted now (under <see cref="_gate"/>, by the token holder).</summary>
    private BatchPosition NextPosition(PactBatch batch)
    {
        if (!IsClustered)
        {
            return BatchPosition.Embedded(batch.Bid);
        }

        if (batch.IsGlobal)
        {
            return BatchPosition.GlobalPart(batch.Gbid, _workerIndex, batch.Bid);
        }

        // Increasing here even if the wall clock steps back (see BatchPosition: only other workers compare stamps).
        _lastStamp = Math.Max(_lastStamp + 1, DateTime.UtcNow.Ticks);
        return BatchPosition.Local(_lastGlobalEmitted, _lastStamp, _workerIndex, batch.Bid);
    }

    public bool IsResolved(BatchPosition position)
    {
        if (position.IsNone)
        {
            return true;
        }

        var resolved = position.Worker == _workerIndex ? ResolvedBid : Volatile.Read(ref _resolvedOnWorker[position.Worker]);
        return position.Bid <= resolved;
    }

    /// <summary>Worker <paramref name="worker"/> said every batch of it up to <paramref name="resolvedBid"/> is resolved.</summary>
    public void HeardResolved(int worker, long resolvedBid)
    {
        if (worker == _workerIndex || worker is < 0 or >= 64)
        {
            return;
        }

        ref var known = ref _resolvedOnWorker[worker];
        var seen = Volatile.Read(ref known);
        while (resolvedBid > seen)
        {
            var before = Interlocked.CompareExchange(ref known, resolvedBid, seen);
            if (before == seen)
            {
                return;
            }

            seen = before;
        }
    }

    /// <summary>
    /// Whether the batch at <paramref name="position"/> is resolved, asking its worker when what was last heard from it
    /// does not say so (a question only the hybrid check's incomplete-AfterSet case ever needs).
    /// </summary>
    public async Task<bool> IsResolvedAsync(BatchPosition position)
    {
        if (IsResolved(position) || position.Worker == _workerIndex)
        {
            return IsResolved(position);
        }

        HeardResolved(position.Worker, await _grains.GetGrain<IWorkerPactGrain>(position.Worker).ResolvedBid());
        return IsResolved(position);
    }

    /// <summary>
    /// Completes with true once every batch in <paramref name="bids"/> (bids of worker <paramref name="worker"/>) has
    /// committed, with false as soon as one turns out aborted: the hybrid commit rule's wait (thesis §3.3.4.4), one message
    /// per other worker that has such batches (§4.2.4's WaitBatchCommit). Unbounded; the caller bounds it.
    /// </summary>
    public Task<bool> WhenCommittedAsync(int worker, long[] bids) =>
        worker == _workerIndex ? WhenCommittedHereAsync(bids) : _grains.GetGrain<IWorkerPactGrain>(worker).WhenCommitted(bids);

    /// <summary>The same for batches of this silo.</summary>
    public async Task<bool> WhenCommittedHereAsync(long[] bids)
    {
        foreach (var bid in bids)
        {
            if (!await WhenResolvedAsync(bid))
            {
                return false;
            }
        }

        return true;
    }
}
