using System.Collections.Concurrent;

namespace Snapper.Cluster;

/// <summary>
/// Which worker each silo has been seen serving as, and which of those silos have since died: what the master needs to
/// tell that a worker was lost (<see cref="WorkerLossWatcher"/>).
/// </summary>
/// <remarks>
/// <para>
/// A silo's role is known only from its metadata, which Orleans' metadata cache fetches from the silo after membership
/// shows it active, and drops once membership shows it dead. So membership can show a worker's silo active before anyone
/// can tell it is a worker, and dead after nobody can any more. What a silo was seen serving as is therefore remembered
/// here whenever the master's roster reads it (<see cref="Learned"/>: each placement on a worker, and the watcher's own
/// looks), and a dead silo is matched against that memory, not against the metadata of the moment.
/// </para>
/// <para>
/// What is left: a silo that dies before its metadata reached the master (a fetch, plus at most the watcher's look-again
/// period) is not reported, and its batches end at ExecutionTimeout as before. A placement that read a silo active just
/// before the watcher saw it dead can teach it after that look; it is then reported one look late, which at worst aborts
/// undecided batches of the worker's next incarnation (an abort is always safe).
/// </para>
/// <para>Invariants:</para>
/// <list type="bullet">
/// <item>A silo is reported lost at most once, and only if it was seen serving as a worker before it died.</item>
/// <item>An entry lives until membership stops listing its silo after it was seen dead (Orleans keeps a dead silo's entry
/// for days), so this holds about one entry per silo incarnation in the cluster's membership, not per incarnation ever.</item>
/// </list>
/// </remarks>
internal sealed class WorkerSiloHistory
{
    private readonly ConcurrentDictionary<SiloAddress, int> _workers = new();

    // Only the watcher's loop reads and changes these.
    private readonly HashSet<SiloAddress> _reported = [];

    /// <summary><paramref name="silo"/> announced itself as worker <paramref name="worker"/>.</summary>
    public void Learned(SiloAddress silo, int worker)
    {
        // Read first: this runs on every placement on a worker, and TryAdd locks even when the entry is there.
        if (!_workers.ContainsKey(silo))
        {
            _workers.TryAdd(silo, worker);
        }
    }

    /// <summary>The worker <paramref name="silo"/> was seen serving as, or null.</summary>
    public int? WorkerOf(SiloAddress silo) => _workers.TryGetValue(silo, out var worker) ? worker : null;

    /// <summary>
    /// The workers whose silo <paramref name="snapshot"/> shows dead for the first time; forgets silos no longer listed.
    /// Called by one loop at a time.
    /// </summary>
    public List<int> NewlyLost(ClusterMembershipSnapshot snapshot)
    {
        var lost = new List<int>();
        foreach (var (silo, worker) in _workers)
        {
            if (!snapshot.Members.TryGetValue(silo, out var member))
            {
                // Dropped from the table after it was seen dead. A silo not listed yet (learned from a newer snapshot
                // than this one) stays.
                if (_reported.Remove(silo))
                {
                    _workers.TryRemove(silo, out _);
                }
            }
            else if (member.Status == SiloStatus.Dead && _reported.Add(silo))
            {
                lost.Add(worker);
            }
        }

        return lost;
    }
}
