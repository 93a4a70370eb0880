using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Snapper.Hosting;

namespace Snapper.Migration;

/// <summary>
/// On a worker: takes the master's placement directory when the silo starts (it may have missed migrations while it was
/// down; actors do not activate here before, see <see cref="PlacementDirectory.WhenReadAsync"/>) and every
/// ExecutionTimeout after, and releases freezes whose migration helper went silent (the master crashed mid-migration), after taking the
/// master's directory again so that the release follows whatever the migration committed; a freeze of a master process
/// that restarted since is released at the first read of the new master's directory. Retries while the master is
/// unreachable; its own copy (on disk) serves meanwhile.
/// </summary>
internal sealed class MigrationDirectoryRefresher(
    IOptions<SnapperOptions> options, IGrainFactory grains, PlacementDirectory directory, MigrationGate gate,
    ILogger<MigrationDirectoryRefresher> logger) : SiloRoleLoop(SiloRole.Worker, options.Value)
{
    private readonly SnapperOptions _options = options.Value;

    /// <summary>How long a freeze may last before this worker suspects its helper died: beyond every bound a migration step has.</summary>
    public TimeSpan StaleFreeze => 10 * _options.ExecutionTimeout;

    protected override async Task RunAsync(CancellationToken stopping)
    {
        var refreshed = false;
        while (!stopping.IsCancellationRequested)
        {
            try
            {
                // Read every round (one small call per ExecutionTimeout): a worker that missed a move while it was up
                // (the helper could not tell it) learns it here; it stayed frozen for that actor meanwhile.
                var stale = gate.FrozenLongerThan(StaleFreeze);
                var snapshot = await grains.GetGrain<IPlacementDirectoryGrain>(0).Snapshot().WaitAsync(_options.ExecutionTimeout, stopping);
                directory.Replace(snapshot);
                directory.MarkRead();
                refreshed = true;
                foreach (var (actor, migration) in stale)
                {
                    logger.LogWarning("Actor {Actor} was frozen for a migration longer than {Bound}; its helper went silent, released by the master's directory", actor, StaleFreeze);
                    gate.Release(actor, migration);
                }

                // Freezes of a master process that is gone (it restarted): their helper died with it, and the directory
                // just taken says where each of those actors lives, committed or not.
                foreach (var (actor, migration) in gate.FrozenByOtherThan(snapshot.MasterIncarnation))
                {
                    logger.LogWarning("Actor {Actor} was frozen by a migration of a master that restarted since; released by the new master's directory", actor);
                    gate.Release(actor, migration);
                }
            }
            catch (Exception exception) when (!stopping.IsCancellationRequested)
            {
                logger.LogDebug(exception, "The master's placement directory could not be read yet");
            }

            try
            {
                // Every ExecutionTimeout, but every second while an actor is frozen here (also one frozen during the
                // wait), so that a freeze of a master that restarted ends soon after.
                var next = Environment.TickCount64 + (long)_options.ExecutionTimeout.TotalMilliseconds;
                do
                {
                    await Task.Delay(TimeSpan.FromSeconds(1), stopping);
                }
                while (refreshed && gate.IsEmpty && Environment.TickCount64 < next);
            }
            catch (OperationCanceledException)
            {
                return;
            }
        }
    }
}
