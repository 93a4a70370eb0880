namespace Snapper.Coordination;

/// <summary>
/// A coordinator (thesis §3.3.1.1): hands out transaction ids. An actor starting a transaction asks the
/// coordinator its own id hashes to, so the load spreads over <c>SnapperOptions.Coordinators</c> grains.
/// </summary>
internal interface ICoordinatorGrain : IGrainWithIntegerKey
{
    /// <summary>A context with a new, unique ACT tid for a transaction whose first actor is <paramref name="root"/>.</summary>
    Task<TxnContext> NewAct(GrainId root);
}
