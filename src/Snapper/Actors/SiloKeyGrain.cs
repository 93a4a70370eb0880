using Orleans.Concurrency;

namespace Snapper.Actors;

/// <summary>
/// One per silo, placed on the silo its key names (<see cref="SiloAddress.ToParsableString"/>): tells another silo this
/// silo's call key, so that it can admit this silo's internal calls (<see cref="SiloCallKeys"/>). Refuses clients.
/// </summary>
internal interface ISiloKeyGrain : IGrainWithStringKey
{
    Task<Guid> Key();
}

[Reentrant, Cluster.SiloPlacement]
internal sealed class SiloKeyGrain(SiloCallKeys keys) : Cluster.SnapperSystemGrain, ISiloKeyGrain
{
    public Task<Guid> Key() => Task.FromResult(keys.Key);
}
