using Orleans.Concurrency;
using Snapper.Act;
using Snapper.Pact;

namespace Snapper.Cluster;

/// <summary>The master's global coordinator: a thin grain over the silo's <see cref="GlobalPactService"/>.</summary>
[Reentrant, KeepAlive, MasterPlacement]
internal sealed class GlobalCoordinatorGrain(GlobalPactService service) : SnapperSystemGrain, IGlobalCoordinatorGrain
{
    public Task<GlobalTicket> Submit(ActorAccessInfo accessInfo, GrainId root) => service.SubmitAsync(accessInfo, root);

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

    public Task<bool> OutcomeOf(long gbid, int worker) => service.OutcomeOfAsync(gbid, worker);

    public Task Confirmed(long gbid, int worker)
    {
        service.Confirmed(gbid, worker);
        return Task.CompletedTask;
    }
}

/// <summary>A worker's PACT endpoint: a thin grain over the silo's <see cref="PactService"/>.</summary>
[Reentrant, KeepAlive, WorkerPlacement]
internal sealed class WorkerPactGrain(PactService service, Actors.ActorDirectory actors, Logging.WriteAheadLog log, Actors.SiloCallKeys callKeys) : SnapperSystemGrain, IWorkerPactGrain
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

    public Task<TxnOutcome> ResolveAct(long tid, GrainId firstActor, GrainId participant)
    {
        // A first actor without a core here has not run since this silo started: whatever it coordinated before is in
        // the log (an open commit) or was never committed. One with a core answers itself (memory, then the log); it
        // never waits on its own recovery then, so two silos resolving each other's transactions cannot wait in a cycle.
        if (actors.Contains(firstActor))
        {
            return GrainFactory.GetGrain<Act.IActParticipant>(firstActor).Resolve(callKeys.Own, tid, participant);
        }

        return Task.FromResult(log.IsUnacknowledgedCommit(tid) ? TxnOutcome.Committed : TxnOutcome.Aborted);
    }

    public Task<bool> WhenCommitted(long[] bids) => service.WhenCommittedHereAsync(bids);
}
