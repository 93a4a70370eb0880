using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Snapper.Hosting;

namespace Snapper.Cluster;

/// <summary>
/// Which worker hosts each transactional actor: the user's <see cref="IActorPlacement"/> if it answers, else the actor
/// id's uniform hash modulo <see cref="SnapperOptions.Workers"/>. A pure function of the actor and the settings, so every
/// silo computes the same map without asking anyone, and an actor always returns to the worker that holds its log.
/// </summary>
internal sealed class ActorPlacementMap(IOptions<SnapperOptions> options, IServiceProvider services)
{
    private readonly IActorPlacement? _override = services.GetService<IActorPlacement>();
    private readonly int _workers = Math.Max(1, options.Value.Workers);

    /// <summary>Whether actors are placed by worker (master and workers), rather than anywhere (embedded).</summary>
    public bool Clustered { get; } = options.Value.Role != SiloRole.Embedded;

    public int Workers => _workers;

    public int WorkerOf(GrainId actor)
    {
        if (_override?.WorkerOf(actor, _workers) is { } chosen)
        {
            if (chosen < 0 || chosen >= _workers)
            {
                throw new InvalidOperationException($"{_override.GetType().Name} placed actor {actor} on worker {chosen}, but the cluster has workers 0 to {_workers - 1}.");
            }

            return chosen;
        }

        return (int)(actor.GetUniformHashCode() % (uint)_workers);
    }
}
