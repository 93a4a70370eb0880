using Orleans.Concurrency;

namespace Snapper.Cluster;

/// <summary>The master's global ordering and commit (thesis §4.2.3), as workers reach it. Key 0, on the master.</summary>
internal interface IGlobalCoordinatorGrain : IGrainWithIntegerKey
{
    /// <summary>Orders a PACT whose actors span workers; completes when its global batch was sent to every worker it touches.</summary>
    Task<GlobalTicket> Submit(ActorAccessInfo accessInfo);

    /// <summary>Worker <paramref name="worker"/>'s part of global batch <paramref name="gbid"/> completed and may commit.</summary>
    [OneWay]
    Task Vote(long gbid, int worker);

    /// <summary>A worker's part of global batch <paramref name="gbid"/> failed: it, and every later uncommitted global batch, abort.</summary>
    [OneWay]
    Task Abort(long gbid, TransactionAbortedException reason);
}

/// <summary>A worker's PACT endpoint for the master and for other workers. Key = worker index, on that worker.</summary>
internal interface IWorkerPactGrain : IGrainWithIntegerKey
{
    /// <summary>The worker's part of a global batch, to merge into its local order (in gbid order, one at a time).</summary>
    Task Deliver(GlobalSubBatch subBatch);

    /// <summary>The master committed global batch <paramref name="gbid"/>; completes when this worker committed its part.</summary>
    Task Commit(long gbid);

    /// <summary>The master aborted the global batches from <paramref name="fromGbid"/> to <paramref name="toGbid"/>.</summary>
    [OneWay]
    Task AbortFrom(long fromGbid, long toGbid, TransactionAbortedException reason);

    /// <summary>
    /// Global PACT <paramref name="gtid"/> (of global batch <paramref name="gbid"/>)'s first method returned: its unused
    /// accesses to <paramref name="actors"/> are released, once the part is merged here (Finish may outrun the sub-batch).
    /// </summary>
    Task<bool> Finish(long gtid, long gbid, GrainId[] actors);
}
