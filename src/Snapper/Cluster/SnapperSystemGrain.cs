using Snapper.Actors;

namespace Snapper.Cluster;

/// <summary>
/// Base of Snapper's own cluster grains (global ordering on the master, a worker's PACT endpoint): their messages order,
/// commit and abort batches, so they accept calls only from inside the cluster's silos: a grain, or a silo's own runtime
/// (Orleans names such a sender the silo's hosted client). A client's call is refused before it touches anything.
/// </summary>
internal abstract class SnapperSystemGrain : Grain, IIncomingGrainCallFilter
{
    async Task IIncomingGrainCallFilter.Invoke(IIncomingGrainCallContext context)
    {
        if (!SnapperEntryPoints.IsFromSilo(context.SourceId))
        {
            throw new SnapperEntryPointException(context.InterfaceMethod.Name, context.SourceId?.ToString());
        }

        await context.Invoke();
    }
}
