using Snapper.Cluster;
using Snapper.Hybrid;

namespace Snapper.Pact;

/// <summary>
/// What the hybrid check needs of this silo's batches beyond bids: each batch's position in the order all workers'
/// batches are compared in (<see cref="BatchPosition"/>), the frontier later batches come after, and how far the
/// cluster has resolved its batches in that order.
/// </summary>
/// <remarks>
/// Invariant (under <see cref="_gate"/>): positions are handed out by the token holder in bid order
/// (<see cref="Register"/>), so a later batch of this silo always has a larger position, and it is larger than every
/// frontier handed out before (<see cref="_lastStamp"/> only grows).
/// </remarks>
internal sealed partial class PactService
{
    private long _lastStamp;

    /// <summary>This silo's worker index (0 on an embedded silo).</summary>
    public int WorkerIndex => _workerIndex;

    /// <summary>
    /// On one silo: whether every batch up to <paramref name="position"/> is resolved (batches resolve in bid order). In
    /// a cluster no worker knows that of the others' batches, and a propagated max(BeforeSet) may stand for batches of
    /// several workers (an ACT's, through a read-only participant that released its lock before the ACT was decided), so
    /// the answer is "not known": such values are kept rather than dropped. That is sound, and costs aborts: an ACT whose
    /// AfterSet is incomplete aborts where one silo could let it pass, and a kept value with a gbid that some worker has
    /// not reached (it took part in no global batch since) places that worker's later local batches below it, so an ACT
    /// that carries it and is followed by such a batch aborts until that worker receives a later global part.
    /// </summary>
    public bool IsResolved(BatchPosition position) => position.IsNone || (!IsClustered && position.Bid <= ResolvedBid);

    /// <summary>
    /// A position that every batch this silo emits from now on comes after, at or after <paramref name="atLeast"/> when that
    /// can be arranged: later local batches then get larger stamps, which is allowed whenever no global part before
    /// <paramref name="atLeast"/> can still reach this worker (the last global part emitted here is the one before it;
    /// past it, the frontier is after it anyway; short of it, a global part below it may still come).
    /// </summary>
    public BatchPosition EmissionFrontier(BatchPosition atLeast)
    {
        if (!IsClustered)
        {
            var last = Volatile.Read(ref _lastBid);
            return last < 0 ? BatchPosition.None : BatchPosition.Embedded(last);
        }

        lock (_gate)
        {
            if (!atLeast.IsNone && !atLeast.IsGlobal && atLeast.Gbid == _lastGlobalEmitted && atLeast.Stamp >= _lastStamp)
            {
                _lastStamp = atLeast.Stamp + 1;
            }

            return FrontierLocked();
        }
    }

    private BatchPosition FrontierLocked()
    {
        // A later local batch gets a larger stamp than this (the stamp is raised here, so a wall clock that steps back
        // cannot break that), and a later global part a larger gbid than the last one emitted here.
        _lastStamp = Math.Max(_lastStamp, DateTime.UtcNow.Ticks - 1);
        return BatchPosition.Local(_lastGlobalEmitted, _lastStamp, _workerIndex, long.MaxValue);
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

    /// <summary>
    /// Completes with true once an ACT whose first actor is on this silo may commit after every batch in
    /// <paramref name="bids"/> (bids of worker <paramref name="worker"/>), with false as soon as one turns out aborted: the
    /// hybrid commit rule's wait (thesis §3.3.4.4), one message per other worker that has such batches (§4.2.4's
    /// WaitBatchCommit). Unbounded; the caller bounds it.
    /// </summary>
    /// <remarks>
    /// For this silo's own batches the ACT waits only until their commit records are queued on the ordered logger
    /// (<see cref="WhenCommitsQueuedHereAsync"/>), not until they are durable and applied: the ACT's own commit record
    /// is appended after them on that logger, so no crash keeps the ACT and loses a batch it read from, and a batch
    /// whose record is queued no longer aborts (it commits, or ends in doubt with every record after it). Another
    /// worker's batches commit through that worker's log, which this silo's order does not cover: for them the ACT
    /// waits until they committed there.
    /// </remarks>
    public Task<bool> WhenCommitsOrderedAsync(int worker, long[] bids) =>
        worker == _workerIndex ? WhenCommitsQueuedHereAsync(bids) : _grains.GetGrain<IWorkerPactGrain>(worker).WhenCommitted(bids);

    /// <summary>
    /// Completes with true once every batch of this silo in <paramref name="bids"/> has committed, with false as soon as
    /// one turns out aborted (for an ACT whose first actor is on another worker, <see cref="IWorkerPactGrain.WhenCommitted"/>).
    /// </summary>
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

    /// <summary>
    /// Completes with true once every batch of this silo in <paramref name="bids"/> has its commit record queued on the
    /// ordered logger or has committed (without a log the two are the same: a batch commits as soon as it is complete),
    /// with false as soon as one aborted or ended in doubt. What an ACT appends to the ordered logger afterwards follows
    /// those records.
    /// </summary>
    public async Task<bool> WhenCommitsQueuedHereAsync(long[] bids)
    {
        foreach (var bid in bids)
        {
            Task<bool> queued;
            lock (_gate)
            {
                queued = _uncommitted.TryGetValue(bid, out var batch) ? batch.WhenCommitQueued() : Task.FromResult(IsCommittedLocked(bid));
            }

            if (!await queued)
            {
                return false;
            }
        }

        return true;
    }
}
