using System.Collections.Concurrent;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Snapper.Hosting;

namespace Snapper.Cluster;

/// <summary>
/// Which worker hosts each transactional actor: a migrated actor's entry in the placement directory if it has one
/// (<see cref="Migration.PlacementDirectory"/>), else the user's <see cref="IActorPlacement"/> if it answers, else the
/// actor id's uniform hash modulo <see cref="SnapperOptions.HomeWorkers"/> (all workers by default). Every silo computes the same map: the hash part
/// without asking anyone, the directory part from the copy every silo keeps of the master's (a migration changes it on
/// every silo while the actor is frozen, before the actor serves again).
/// </summary>
internal sealed class ActorPlacementMap(IOptions<SnapperOptions> options, IServiceProvider services)
{
    private readonly IActorPlacement? _override = services.GetService<IActorPlacement>();
    private readonly int _workers = Math.Max(1, options.Value.Workers);
    private readonly int _homeWorkers = options.Value.HomeWorkers is > 0 and var home && home <= options.Value.Workers ? home : Math.Max(1, options.Value.Workers);
    private readonly ConcurrentDictionary<GrainId, int> _moved = new();

    /// <summary>Whether actors are placed by worker (master and workers), rather than anywhere (embedded).</summary>
    public bool Clustered { get; } = options.Value.Role != SiloRole.Embedded;

    public int Workers => _workers;

    /// <summary>Workers actors are hashed over until they move (<see cref="SnapperOptions.HomeWorkers"/>).</summary>
    public int HomeWorkers => _homeWorkers;

    /// <summary>The actors this silo knows to have moved, with their workers.</summary>
    public IReadOnlyDictionary<GrainId, int> Moved => _moved;

    public int WorkerOf(GrainId actor) => _moved.TryGetValue(actor, out var moved) ? moved : HomeOf(actor);

    /// <summary>Where the actor lives when it never moved.</summary>
    public int HomeOf(GrainId actor)
    {
        if (_override?.WorkerOf(actor, _workers) is { } chosen)
        {
            if (chosen < 0 || chosen >= _workers)
            {
                throw new InvalidOperationException($"{_override.GetType().Name} placed actor {actor} on worker {chosen}, but the cluster has workers 0 to {_workers - 1}.");
            }

            return chosen;
        }

        return (int)(actor.GetUniformHashCode() % (uint)_homeWorkers);
    }

    /// <summary>Records that <paramref name="actor"/> lives on <paramref name="worker"/> from now on (its home: no entry).</summary>
    public void Move(GrainId actor, int worker)
    {
        if (worker == HomeOf(actor))
        {
            _moved.TryRemove(actor, out _);
        }
        else
        {
            _moved[actor] = worker;
        }
    }
}
