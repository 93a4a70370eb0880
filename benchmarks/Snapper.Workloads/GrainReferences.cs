namespace Snapper.Workloads;

/// <summary>
/// Grain references by integer key, created once. Orleans resolves the interface type of every
/// <c>GetGrain</c> call anew (type-name formatting and attribute lookups, several microseconds), which in a
/// client loop that issues tens of thousands of transactions per second is load-generator cost, not system cost.
/// </summary>
public sealed class GrainReferences<TGrain>(IGrainFactory grains, int count) where TGrain : IGrainWithIntegerKey
{
    private readonly TGrain?[] _references = new TGrain?[count];

    /// <summary>The factory the references come from; a workload run against another host needs new ones.</summary>
    public IGrainFactory Factory { get; } = grains;

    public TGrain this[long key] => _references[key] ??= Factory.GetGrain<TGrain>(key);
}
