namespace Snapper.Hosting;

/// <summary>
/// A background loop a silo of one role (every silo, for a null role) runs from the moment it is active (it needs grain
/// calls and membership) until it stops: started on the thread pool, so the silo's start does not wait for it, and
/// cancelled as the silo stops.
/// </summary>
internal abstract class SiloRoleLoop(SiloRole? role, SnapperOptions options) : ILifecycleParticipant<ISiloLifecycle>, IDisposable
{
    private readonly CancellationTokenSource _stop = new();

    public void Participate(ISiloLifecycle lifecycle)
    {
        if (role is { } only && options.Role != only)
        {
            return;
        }

        lifecycle.Subscribe(GetType().Name, ServiceLifecycleStage.Active, starting =>
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

    /// <summary>The loop; it ends when <paramref name="stopping"/> is cancelled.</summary>
    protected abstract Task RunAsync(CancellationToken stopping);
}
