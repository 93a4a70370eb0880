using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Snapper.Hosting;

namespace Snapper.Cluster;

/// <summary>
/// On the master: follows Orleans' cluster membership and tells the global PACT service when the silo of a worker dies,
/// declared dead by the other silos or by the worker's next incarnation (a restarted silo declares its predecessor dead
/// as it joins). The global batches that waited on it then abort at once (<see cref="GlobalPactService.WorkerLost"/>)
/// rather than when the master's watchdog finds them overdue (ExecutionTimeout), and so do the batches after them on the
/// other workers, local ones included.
/// </summary>
internal sealed class WorkerLossWatcher(
    IOptions<SnapperOptions> options, IClusterMembershipService membership, ClusterRoster roster, IServiceProvider services,
    ILogger<WorkerLossWatcher> logger, SnapperTestHooks testHooks) : SiloRoleLoop(SiloRole.Master, options.Value)
{
    private readonly SnapperOptions _options = options.Value;

    // The silo last seen serving each worker: its death is what this watches for.
    private readonly Dictionary<int, SiloAddress> _serving = new();

    protected override async Task RunAsync(CancellationToken stopping)
    {
        // Resolved here, on the master only: the service runs a watchdog timer from its construction.
        var global = services.GetRequiredService<GlobalPactService>();
        try
        {
            // Each update is the whole membership; one missed in between (a worker that died and came back) still shows
            // the old silo as dead in the next.
            await foreach (var snapshot in membership.MembershipUpdates.WithCancellation(stopping))
            {
                foreach (var worker in LostWorkers(snapshot))
                {
                    if (testHooks.BeforeWorkerLostAbort?.Invoke(worker) is { } delayed)
                    {
                        await delayed.WaitAsync(stopping);
                    }

                    global.WorkerLost(worker);
                }
            }
        }
        catch (OperationCanceledException) when (stopping.IsCancellationRequested)
        {
        }
        catch (Exception exception)
        {
            // Only the shortcut is lost: batches that waited on a dead worker still abort at the watchdog's bound.
            logger.LogError(exception, "Stopped following cluster membership; a worker's death is now noticed only by the global batch watchdog");
        }
    }

    /// <summary>The workers whose last known silo <paramref name="snapshot"/> shows dead; remembers the silos serving now.</summary>
    private List<int> LostWorkers(ClusterMembershipSnapshot snapshot)
    {
        var lost = new List<int>();
        for (var worker = 0; worker < _options.Workers; worker++)
        {
            if (_serving.TryGetValue(worker, out var known) && snapshot.GetSiloStatus(known) == SiloStatus.Dead)
            {
                _serving.Remove(worker);
                lost.Add(worker);
            }

            if (roster.WorkerSilo(worker) is { } serving && serving != known)
            {
                _serving[worker] = serving;
            }
        }

        return lost;
    }
}
