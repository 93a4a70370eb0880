namespace Snapper.Cluster;

/// <summary>
/// Overrides where a cluster places transactional actors (thesis §4.2.1: the placement directory). Register one in
/// every silo's services (<c>services.AddSingleton&lt;IActorPlacement, MyPlacement&gt;()</c>); every silo must give
/// the same answer for an actor, since each silo routes PACT sub-batches by it and an actor's log is on its worker.
/// </summary>
public interface IActorPlacement
{
    /// <summary>The worker (0 to <paramref name="workers"/> - 1) that hosts <paramref name="actor"/>, or null for the default (its id's hash).</summary>
    int? WorkerOf(GrainId actor, int workers);
}
