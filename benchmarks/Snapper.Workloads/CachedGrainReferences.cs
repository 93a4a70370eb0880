using System.Collections.Concurrent;
using System.Runtime.CompilerServices;

namespace Snapper.Workloads;

/// <summary>
/// The grain references a workload's actors call, made once per silo and key. Orleans' <c>GetGrain</c> resolves the
/// interface's grain type anew on every call (type-name formatting and attribute reads, a few microseconds each): in a
/// SmallBank transaction whose first actor calls three others that was about a tenth of the silo's CPU, in every mode
/// alike. The client loops already reuse their references (<see cref="GrainReferences{TGrain}"/>); with this, actors do
/// too, so a run measures the calls and their transactions rather than that lookup.
/// </summary>
/// <remarks>
/// Kept per grain factory, which is one per silo or client: a reference is bound to the runtime that made it, so
/// several silos in one process (the tests' clusters) must not share them. A silo that goes away takes its table with
/// it (weak keys).
/// </remarks>
public static class CachedGrainReferences
{
    /// <summary>The reference to <typeparamref name="TGrain"/> <paramref name="key"/>, made at its first use on this factory.</summary>
    public static TGrain Cached<TGrain>(this IGrainFactory grains, long key) where TGrain : IGrainWithIntegerKey =>
        ByFactory<TGrain>.Of(grains).GetOrAdd(key, static (id, factory) => factory.GetGrain<TGrain>(id), grains);

    private static class ByFactory<TGrain> where TGrain : IGrainWithIntegerKey
    {
        private static readonly ConditionalWeakTable<IGrainFactory, ConcurrentDictionary<long, TGrain>> Tables = new();

        public static ConcurrentDictionary<long, TGrain> Of(IGrainFactory grains) => Tables.GetValue(grains, static _ => new());
    }
}
