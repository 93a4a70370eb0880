using Orleans.Concurrency;
using Snapper.Pact;

namespace Snapper.Cluster;

/// <summary>The master's global coordinator: a thin grain over the silo's <see cref="GlobalPactService"/>.</summary>
[Reentrant, KeepAlive, MasterPlacement]
internal sealed class GlobalCoordinatorGrain(GlobalPactService service) : SnapperSystemGrain, IGlobalCoordinatorGrain
{
    public Task<GlobalTicket> Submit(ActorAccessInfo accessInfo) => service.SubmitAsync(accessInfo);

    public Task Vote(long gbid, int worker)
    {
        service.Vote(gbid, worker);
        return Task.CompletedTask;
    }

    public Task Abort(long gbid, TransactionAbortedException reason)
    {
        service.Abort(gbid, reason);
        return Task.CompletedTask;
    }
}

/// <summary>A worker's PACT endpoint: a thin grain over the silo's <see cref="PactService"/>.</summary>
[Reentrant, KeepAlive, WorkerPlacement]
internal sealed class WorkerPactGrain(PactService service) : SnapperSystemGrain, IWorkerPactGrain
{
    public Task Deliver(GlobalSubBatch subBatch)
    {
        service.DeliverGlobal(subBatch);
        return Task.CompletedTask;
    }

    public Task Commit(long gbid) => service.CommitGlobalAsync(gbid);

    public Task AbortFrom(long fromGbid, long toGbid, TransactionAbortedException reason)
    {
        service.AbortGlobal(fromGbid, toGbid, reason);
        return Task.CompletedTask;
    }

    public Task<bool> Finish(long gtid, long gbid, GrainId[] actors) => service.FinishMergedAsync(gtid, gbid, actors);
}
