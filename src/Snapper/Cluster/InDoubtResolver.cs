using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Snapper.Act;
using Snapper.Hosting;
using Snapper.Logging;

namespace Snapper.Cluster;

/// <summary>
/// After a worker restarts, asks the silos that decided them about the state records its recovery found in doubt (thesis
/// §4.2.3.7): a global part's outcome from the master, a remote ACT participant's from its first actor's worker. Each
/// answer is logged here before it counts (<see cref="WriteAheadLog.ResolveInDoubtAsync"/>), and an actor activates only
/// once nothing of its state is in doubt, so no transaction ever reads a state whose outcome is not known.
/// </summary>
/// <remarks>
/// Runs once the silo is active (it needs grain calls), in the background, asking again with a growing pause while a
/// deciding silo does not answer: an actor waiting on it fails its activation with <see cref="ActorRecoveringException"/>
/// after ExecutionTimeout rather than hang. The questions never wait on an actor's activation on the other side (see
/// <see cref="IWorkerPactGrain.ResolveAct"/>), so two restarted workers cannot wait on each other.
/// </remarks>
internal sealed class InDoubtResolver(
    WriteAheadLog log,
    IGrainFactory grains,
    ActorPlacementMap placement,
    IOptions<SnapperOptions> options,
    ILogger<InDoubtResolver> logger) : ILifecycleParticipant<ISiloLifecycle>
{
    private static readonly TimeSpan MaxPause = TimeSpan.FromSeconds(5);
    private readonly CancellationTokenSource _stopping = new();

    public void Participate(ISiloLifecycle lifecycle) => lifecycle.Subscribe(
        nameof(InDoubtResolver), ServiceLifecycleStage.Active,
        started =>
        {
            if (log.Enabled && log.InDoubt.Count > 0)
            {
                _ = Task.Run(() => ResolveAllAsync(_stopping.Token));
            }

            return Task.CompletedTask;
        },
        _ =>
        {
            _stopping.Cancel();
            return Task.CompletedTask;
        });

    private async Task ResolveAllAsync(CancellationToken stopping)
    {
        var pause = TimeSpan.FromMilliseconds(100);
        while (!stopping.IsCancellationRequested)
        {
            var parts = log.InDoubt.GroupBy(r => (r.Kind, r.Id)).ToArray();
            if (parts.Length == 0)
            {
                return;
            }

            logger.LogInformation("Resolving {Count} transaction(s) recovery found in doubt with the silos that decided them", parts.Length);
            var unresolved = 0;
            foreach (var part in parts)
            {
                try
                {
                    var committed = await OutcomeAsync(part.First()).WaitAsync(options.Value.ExecutionTimeout, stopping);
                    await log.ResolveInDoubtAsync(part.Key.Kind, part.Key.Id, committed);
                    logger.LogInformation("{Kind} {Id}, in doubt after recovery, {Outcome}", part.Key.Kind, part.Key.Id, committed ? "committed" : "aborted");
                    if (committed && part.Key.Kind == LoggedTxnKind.GlobalBatch)
                    {
                        await grains.GetGrain<IGlobalCoordinatorGrain>(0).Confirmed(part.Key.Id, options.Value.WorkerIndex);
                    }
                }
                catch (Exception exception) when (!stopping.IsCancellationRequested)
                {
                    unresolved++;
                    logger.LogWarning(exception, "Could not resolve {Kind} {Id} yet; asking again", part.Key.Kind, part.Key.Id);
                }
            }

            if (unresolved > 0)
            {
                await Task.Delay(pause, stopping).ContinueWith(static _ => { }, TaskScheduler.Default);
                pause = TimeSpan.FromTicks(Math.Min(MaxPause.Ticks, pause.Ticks * 2));
            }
        }
    }

    /// <summary>Whether the part of <paramref name="record"/> committed, asked of the silo that decided it.</summary>
    private async Task<bool> OutcomeAsync(LogRecord record)
    {
        if (record.Kind == LoggedTxnKind.GlobalBatch)
        {
            return await grains.GetGrain<IGlobalCoordinatorGrain>(0).OutcomeOf(record.Id, options.Value.WorkerIndex);
        }

        var firstActor = GrainId.Parse(record.Decider!);
        var outcome = await grains.GetGrain<IWorkerPactGrain>(placement.WorkerOf(firstActor))
            .ResolveAct(record.Id, firstActor, GrainId.Parse(record.Actor!));
        return outcome == TxnOutcome.Committed;
    }
}
