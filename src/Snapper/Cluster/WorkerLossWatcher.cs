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
/// <remarks>
/// A dead silo is matched against every silo the roster has read as a worker's (<see cref="WorkerSiloHistory"/>), not
/// against the metadata of the moment: Orleans fetches a silo's metadata only after the update that shows it active, so
/// the last silo of a cluster to join was once unknown to every update the watcher read, and its death went unnoticed
/// (a batch waiting on it then ran to ExecutionTimeout). The watcher therefore also looks again every
/// <see cref="LookAgain"/> while the metadata of an active silo is missing here.
/// </remarks>
internal sealed class WorkerLossWatcher(
    IOptions<SnapperOptions> options, IClusterMembershipService membership, ClusterRoster roster, IServiceProvider services,
    ILogger<WorkerLossWatcher> logger, SnapperTestHooks testHooks) : SiloRoleLoop(SiloRole.Master, options.Value)
{
    // While an active silo's metadata is still on its way to this silo's cache (it is fetched after membership shows the
    // silo active, so after the update that announced it), the watcher looks again at this period: a worker that dies
    // before anyone here read its metadata could not be told from any other silo.
    private static readonly TimeSpan LookAgain = TimeSpan.FromMilliseconds(200);

    protected override async Task RunAsync(CancellationToken stopping)
    {
        // Resolved here, on the master only: the service runs a watchdog timer from its construction.
        var global = services.GetRequiredService<GlobalPactService>();
        try
        {
            // Each update is the whole membership, and the latest one is read at each wake: an update missed in between
            // (a worker that died and came back) still shows the old silo as dead.
            await using var updates = membership.MembershipUpdates.GetAsyncEnumerator(stopping);
            var next = updates.MoveNextAsync().AsTask();
            while (true)
            {
                var complete = roster.LearnWorkers();
                foreach (var worker in roster.Seen.NewlyLost(membership.CurrentSnapshot))
                {
                    if (testHooks.BeforeWorkerLostAbort?.Invoke(worker) is { } delayed)
                    {
                        await delayed.WaitAsync(stopping);
                    }

                    global.WorkerLost(worker);
                }

                if (complete)
                {
                    if (!await next)
                    {
                        return;
                    }
                }
                else if (await Task.WhenAny(next, Task.Delay(LookAgain, stopping)) != next)
                {
                    stopping.ThrowIfCancellationRequested();
                    continue;
                }
                else if (!await next)
                {
                    return;
                }

                next = updates.MoveNextAsync().AsTask();
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
}
