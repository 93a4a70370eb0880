using Snapper.Workloads.Ledger;

namespace Snapper.ClusterKillCheck;

/// <summary>
/// The test's accounts, the same number on each worker. An account's worker is computed as Snapper's placement does
/// (src/Snapper/Cluster/ActorPlacementMap: the actor id's uniform hash modulo the workers, no placement override in
/// the deploy silo), so the load can choose local and global transfers and the report can say where each account lives.
/// </summary>
internal sealed class LedgerAccounts
{
    private readonly Dictionary<long, int> _workerOf = new();
    private readonly long[][] _byWorker;

    public LedgerAccounts(IGrainFactory grains, int workers, int perWorker, long firstId)
    {
        var picked = Enumerable.Range(0, workers).Select(_ => new List<long>()).ToArray();
        for (var id = firstId; picked.Any(p => p.Count < perWorker); id++)
        {
            var worker = WorkerOf(grains, id, workers);
            if (picked[worker].Count < perWorker)
            {
                picked[worker].Add(id);
                _workerOf[id] = worker;
            }
        }

        _byWorker = picked.Select(p => p.ToArray()).ToArray();
        All = _byWorker.SelectMany(p => p).Order().ToArray();
    }

    public long[] All { get; }

    public int Workers => _byWorker.Length;

    public long[] OnWorker(int worker) => _byWorker[worker];

    public int WorkerOf(long id) => _workerOf[id];

    /// <summary>An account as the report names it: its id and the silo that hosts it.</summary>
    public string Label(long id) => $"{id}@worker-{_workerOf[id]}";

    private static int WorkerOf(IGrainFactory grains, long id, int workers) =>
        (int)(grains.GetGrain<ILedgerAccount>(id).GetGrainId().GetUniformHashCode() % (uint)workers);
}
