using Microsoft.Extensions.Options;
using Orleans.Serialization;
using Snapper.Act;
using Snapper.Coordination;
using Snapper.Diagnostics;
using Snapper.Hosting;

namespace Snapper.Actors;

/// <summary>What every transactional actor of a silo shares: settings, method tables, copier, metrics and routing.</summary>
internal sealed class SnapperRuntime(
    IOptions<SnapperOptions> options,
    IGrainFactory grainFactory,
    DeepCopier copier,
    TransactionalMethodTables methods,
    SnapperMetrics metrics)
{
    public SnapperOptions Options { get; } = options.Value;

    public TransactionalMethodTables Methods { get; } = methods;

    public SnapperMetrics Metrics { get; } = metrics;

    /// <summary>The coordinator an actor asks for tids: chosen by hashing the actor's id (thesis §3.3.1.2).</summary>
    public ICoordinatorGrain CoordinatorFor(GrainId actor) =>
        grainFactory.GetGrain<ICoordinatorGrain>(actor.GetUniformHashCode() % (uint)Options.Coordinators);

    public IActParticipant Participant(GrainId actor) => grainFactory.GetGrain<IActParticipant>(actor);

    /// <summary>A private copy of committed state for one transaction; installed only if it commits.</summary>
    public T Copy<T>(T state) where T : class => copier.Copy(state)!;
}
