using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Snapper.Hosting;

namespace Snapper.Migration;

/// <summary>
/// On a worker: takes the master's placement directory when the silo starts (it may have missed migrations while it was
/// down; actors do not activate here before, see <see cref="PlacementDirectory.WhenReadAsync"/>) and every
/// ExecutionTimeout after, and releases freezes whose migration helper went silent (the master crashed mid-migration), after taking the
/// master's directory again so that the release follows whatever the migration committed. Retries while the master is
/// unreachable; its own copy (on disk) serves meanwhile.
/// </summary>
internal sealed class MigrationDirectoryRefresher(
    IOptions<SnapperOptions> options, IGrainFactory grains, PlacementDirectory directory, MigrationGate gate,
    ILogger<MigrationDirectoryRefresher> logger) : ILifecycleParticipant<ISiloLifecycle>, IDisposable
{
    private readonly SnapperOptions _options = options.Value;
    private readonly CancellationTokenSource _stop = new();

    /// <summary>How long a freeze may last before this worker suspects its helper died: beyond every bound a migration step has.</summary>
    public TimeSpan StaleFreeze => 10 * _options.ExecutionTimeout;

    public void Participate(ISiloLifecycle lifecycle)
    {
        if (_options.Role != SiloRole.Worker)
        {
            return;
        }

        lifecycle.Subscribe(nameof(MigrationDirectoryRefresher), ServiceLifecycleStage.Active, starting =>
        {
            _ = Task.Run(() => RunAsync(_stop.Token));
            return Task.CompletedTask;
        }, stopping =>
        {
            _stop.Cancel();
            return Task.CompletedTask;
        });
    }

    public void Dispose() => _stop.Dispose();

    private async Task RunAsync(CancellationToken stopping)
    {
        var refreshed = false;
        while (!stopping.IsCancellationRequested)
        {
            try
            {
                // Read every round (one small call per ExecutionTimeout): a worker that missed a move while it was up
                // (the helper could not tell it) learns it here; it stayed frozen for that actor meanwhile.
                var stale = gate.FrozenLongerThan(StaleFreeze);
                directory.Replace(await grains.GetGrain<IPlacementDirectoryGrain>(0).Snapshot().WaitAsync(_options.ExecutionTimeout, stopping));
                directory.MarkRead();
                refreshed = true;
                foreach (var (actor, migration) in stale)
                {
                    logger.LogWarning("Actor {Actor} was frozen for a migration longer than {Bound}; its helper went silent, released by the master's directory", actor, StaleFreeze);
                    gate.Release(actor, migration);
                }
            }
            catch (Exception exception) when (!stopping.IsCancellationRequested)
            {
                logger.LogDebug(exception, "The master's placement directory could not be read yet");
            }

            try
            {
                await Task.Delay(refreshed ? _options.ExecutionTimeout : TimeSpan.FromSeconds(1), stopping);
            }
            catch (OperationCanceledException)
            {
                return;
            }
        }
    }
}
