using Microsoft.Extensions.DependencyInjection;

namespace Snapper.Tests.Actors;

/// <summary>Non-transactional controls a test uses to end an actor's activation the ways Orleans offers a grain.</summary>
public interface IActivationControl : IGrainWithIntegerKey
{
    /// <summary>This activation's own id and the silo it runs on: a new activation has a new id.</summary>
    Task<(Guid Activation, SiloAddress Silo)> WhoAmI();

    /// <summary>The grain calls <c>DeactivateOnIdle()</c> on itself.</summary>
    Task DeactivateSelf();

    /// <summary>The grain calls <c>MigrateOnIdle()</c> on itself.</summary>
    Task MigrateSelf();

    /// <summary>The grain calls <c>DelayDeactivation(<paramref name="span"/>)</c> on itself.</summary>
    Task KeepAliveFor(TimeSpan span);
}

/// <summary>A transactional actor a test can end the activation of, the ways Orleans offers a grain.</summary>
public abstract class ControllableActor<TState> : TransactionalActor<TState>, IActivationControl
    where TState : class, new()
{
    private readonly Guid _activation = Guid.NewGuid();

    public Task<(Guid Activation, SiloAddress Silo)> WhoAmI() =>
        Task.FromResult((_activation, ServiceProvider.GetRequiredService<ILocalSiloDetails>().SiloAddress));

    public Task DeactivateSelf()
    {
        DeactivateOnIdle();
        return Task.CompletedTask;
    }

    public Task MigrateSelf()
    {
        MigrateOnIdle();
        return Task.CompletedTask;
    }

    public Task KeepAliveFor(TimeSpan span)
    {
        DelayDeactivation(span);
        return Task.CompletedTask;
    }
}
