namespace Snapper.Cluster;

/// <summary>
/// Base of Snapper's own system grains (global ordering on the master, a worker's PACT endpoint, a silo's call key):
/// their messages order, commit and abort batches, or tell secrets, so they accept calls only from inside the cluster's
/// silos: a grain, or a silo's own runtime (Orleans names such a sender the silo's hosted client). A client's call is
/// refused before it touches anything. These grains are off the per-transaction path, so the call filter's cost (Orleans
/// invokes every call to a grain that is a filter through a filter context) does not matter here; transactional actors
/// check their internal calls by key instead (<see cref="Actors.SiloCallKeys"/>).
/// </summary>
internal abstract class SnapperSystemGrain : Grain, IIncomingGrainCallFilter
{
    async Task IIncomingGrainCallFilter.Invoke(IIncomingGrainCallContext context)
    {
        if (!IsFromSilo(context.SourceId))
        {
            throw new SnapperEntryPointException(context.InterfaceMethod.Name, context.SourceId?.ToString());
        }

        await context.Invoke();
    }

    /// <summary>
    /// Whether a call came from inside a silo of the cluster: from a grain, or from a silo's runtime outside any grain
    /// (Orleans gives such calls the silo's hosted client as sender, "hosted-" followed by the silo address).
    /// </summary>
    internal static bool IsFromSilo(GrainId? source) =>
        source is { } id && (!id.IsClient() || id.Key.ToString().StartsWith("hosted-", StringComparison.Ordinal));
}
