using Orleans.Concurrency;
using Snapper.Act;

namespace Snapper.Cluster;

/// <summary>The master's global ordering and commit (thesis §4.2.3), as workers reach it. Key 0, on the master.</summary>
internal interface IGlobalCoordinatorGrain : IGrainWithIntegerKey
{
    /// <summary>Orders a PACT whose actors span workers; completes when its global batch was sent to every worker it touches.</summary>
    Task<GlobalTicket> Submit(ActorAccessInfo accessInfo, GrainId root);

    /// <summary>Worker <paramref name="worker"/>'s part of global batch <paramref name="gbid"/> completed and may commit.</summary>
    [OneWay]
    Task Vote(long gbid, int worker);

    /// <summary>A worker's part of global batch <paramref name="gbid"/> failed: it, and every later uncommitted global batch, abort.</summary>
    [OneWay]
    Task Abort(long gbid, TransactionAbortedException reason);

    /// <summary>
    /// Asked by worker <paramref name="worker"/> that voted and heard no decision, or restarted with its part logged and
    /// undecided: true if global batch <paramref name="gbid"/> committed; false if it aborted, which an undecided batch
    /// is by this question.
    /// </summary>
    Task<bool> OutcomeOf(long gbid, int worker);

    /// <summary>Worker <paramref name="worker"/> made the commit of its part of <paramref name="gbid"/> durable after asking.</summary>
    [OneWay]
    Task Confirmed(long gbid, int worker);
}

/// <summary>A worker's PACT endpoint for the master and for other workers. Key = worker index, on that worker.</summary>
internal interface IWorkerPactGrain : IGrainWithIntegerKey
{
    /// <summary>The worker's part of a global batch, to merge into its local order (in gbid order, one at a time).</summary>
    Task Deliver(GlobalSubBatch subBatch);

    /// <summary>The master committed global batch <paramref name="gbid"/>; completes when this worker committed its part.</summary>
    Task Commit(long gbid);

    /// <summary>
    /// The master aborted the global batches from <paramref name="fromGbid"/> to <paramref name="toGbid"/>; completes when
    /// the worker dropped its parts (the master emits nothing later before, see <see cref="GlobalPactService"/>).
    /// </summary>
    Task AbortFrom(long fromGbid, long toGbid, TransactionAbortedException reason);

    /// <summary>
    /// Global PACT <paramref name="gtid"/> (of global batch <paramref name="gbid"/>)'s first method returned: its unused
    /// accesses to <paramref name="actors"/> are released, once the part is merged here (Finish may outrun the sub-batch).
    /// </summary>
    Task<bool> Finish(long gtid, long gbid, GrainId[] actors);

    /// <summary>
    /// The outcome of ACT <paramref name="tid"/> whose first actor <paramref name="firstActor"/> is on this worker, for a
    /// participant on another worker that restarted with its prepared state logged and no decision: asked of the first
    /// actor if it has been active here since this silo started, else answered from this silo's log (a commit some
    /// participant has not acknowledged is open there; anything else aborted).
    /// </summary>
    Task<TxnOutcome> ResolveAct(long tid, GrainId firstActor, GrainId participant);

    /// <summary>
    /// Completes with true once every one of this worker's batches <paramref name="bids"/> has committed, false as soon as
    /// one aborted: an ACT on another worker read their writes and may commit only after them (hybrid commit rule).
    /// </summary>
    Task<bool> WhenCommitted(long[] bids);
}
