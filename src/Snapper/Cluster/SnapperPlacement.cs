using Orleans.Placement;
using Orleans.Runtime.Placement;
using Snapper.Hosting;

namespace Snapper.Cluster;

/// <summary>Places transactional actors on the worker <see cref="ActorPlacementMap"/> names (anywhere on an embedded silo).</summary>
[GenerateSerializer, Immutable, Alias("snapper.placement.actor")]
internal sealed class TransactionalActorPlacement : PlacementStrategy;

/// <summary>Places Snapper's cluster-wide grains (global ordering, tid sequencer) on the master (on any silo when embedded).</summary>
[GenerateSerializer, Immutable, Alias("snapper.placement.master")]
internal sealed class MasterPlacement : PlacementStrategy;

/// <summary>Places a per-worker grain of Snapper, whose integer key is the worker index, on that worker.</summary>
[GenerateSerializer, Immutable, Alias("snapper.placement.worker")]
internal sealed class WorkerPlacement : PlacementStrategy;

/// <summary>
/// Places a per-silo grain of Snapper, whose string key is a silo's address (<see cref="SiloAddress.ToParsableString"/>),
/// on that silo, and nowhere else: a silo that is not active fails the placement.
/// </summary>
[GenerateSerializer, Immutable, Alias("snapper.placement.silo")]
internal sealed class SiloPlacement : PlacementStrategy;

[AttributeUsage(AttributeTargets.Class, AllowMultiple = false, Inherited = true)]
internal sealed class TransactionalActorPlacementAttribute() : PlacementAttribute(new TransactionalActorPlacement());

[AttributeUsage(AttributeTargets.Class, AllowMultiple = false)]
internal sealed class MasterPlacementAttribute() : PlacementAttribute(new MasterPlacement());

[AttributeUsage(AttributeTargets.Class, AllowMultiple = false)]
internal sealed class WorkerPlacementAttribute() : PlacementAttribute(new WorkerPlacement());

[AttributeUsage(AttributeTargets.Class, AllowMultiple = false)]
internal sealed class SiloPlacementAttribute() : PlacementAttribute(new SiloPlacement());

/// <summary>
/// The placement director of Snapper's strategies (Orleans' extension point for where a grain activates). In a cluster
/// it answers from the roster and the placement map, so an activation on any silo goes where every silo's map says; a
/// silo that is down fails the placement (and the call) with <see cref="WorkerUnavailableException"/>. Embedded, it
/// keeps Orleans' default: a migration's target silo if one was given, else a random compatible silo.
/// </summary>
internal sealed class SnapperPlacementDirector(ActorPlacementMap map, ClusterRoster roster) : IPlacementDirector
{
    public Task<SiloAddress> OnAddActivation(PlacementStrategy strategy, PlacementTarget target, IPlacementContext context)
    {
        if (strategy is SiloPlacement)
        {
            return Task.FromResult(NamedSilo(target, context));
        }

        if (!map.Clustered)
        {
            var compatible = context.GetCompatibleSilos(target);
            return Task.FromResult(IPlacementDirector.GetPlacementHint(target.RequestContextData, compatible)
                ?? (strategy is MasterPlacement && compatible.Contains(context.LocalSilo) ? context.LocalSilo : compatible[Random.Shared.Next(compatible.Length)]));
        }

        return Task.FromResult(strategy switch
        {
            MasterPlacement => roster.RequireMaster(),
            WorkerPlacement => roster.RequireWorker((int)target.GrainIdentity.GetIntegerKey()),
            _ => roster.RequireWorker(map.WorkerOf(target.GrainIdentity)),
        });
    }

    private static SiloAddress NamedSilo(PlacementTarget target, IPlacementContext context)
    {
        var key = target.GrainIdentity.Key.ToString();
        SiloAddress named;
        try
        {
            named = SiloAddress.FromParsableString(key);
        }
        catch (Exception exception) when (exception is FormatException or ArgumentException or IndexOutOfRangeException)
        {
            throw new WorkerUnavailableException(key, "it is not a silo address.");
        }

        return context.GetCompatibleSilos(target).Contains(named)
            ? named
            : throw new WorkerUnavailableException(named.ToString(), "no such silo is active in the cluster.");
    }
}
