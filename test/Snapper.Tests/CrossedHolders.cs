using Snapper.Tests.Actors;

namespace Snapper.Tests;

/// <summary>One of two ACTs that hold each other's next actor: the actor it locked, its gate, its tid.</summary>
internal sealed record CrossedHolder(long Actor, string Gate, long Tid);

/// <summary>Two ACTs staged so that each, once released, asks for the lock the other one holds.</summary>
internal static class CrossedHolders
{
    /// <summary>
    /// Starts two transactions on two actors, each holding its actor's write lock at a gate and, once released, calling
    /// the other's actor. Tids from two coordinators have no start order, so this reads them and names which one is
    /// older.
    /// </summary>
    public static async Task<(CrossedHolder Older, CrossedHolder Younger, Task<long> OlderRun, Task<long> YoungerRun)> StartAsync(
        IGrainFactory grains, string name)
    {
        var ids = ClusterFixture.NewIds(2);
        var gates = ids.Select(id => $"{name}-{id}").ToArray();
        var probes = ids.Select(id => grains.GetGrain<IProbe>(id)).ToArray();
        var runs = new[]
        {
            probes[0].StartTxn(probes[0].Hold, new Hold(gates[0], AccessMode.ReadWrite, ThenTouch: ids[1])),
            probes[1].StartTxn(probes[1].Hold, new Hold(gates[1], AccessMode.ReadWrite, ThenTouch: ids[0])),
        };
        var tids = new[] { await Gates.WhenReached(gates[0]), await Gates.WhenReached(gates[1]) };
        var o = tids[0] < tids[1] ? 0 : 1;
        var y = 1 - o;
        return (new CrossedHolder(ids[o], gates[o], tids[o]), new CrossedHolder(ids[y], gates[y], tids[y]), runs[o], runs[y]);
    }
}
