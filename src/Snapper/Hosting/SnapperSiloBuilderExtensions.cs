using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Options;
using Snapper.Actors;
using Snapper.Diagnostics;
using Snapper.Logging;
using Snapper.Pact;

namespace Snapper.Hosting;

/// <summary>Adds Snapper to an Orleans silo.</summary>
public static class SnapperSiloBuilderExtensions
{
    /// <summary>Adds Snapper with default settings, changed by <paramref name="configure"/>.</summary>
    public static ISiloBuilder AddSnapper(this ISiloBuilder builder, Action<SnapperOptions>? configure = null)
    {
        AddServices(builder.Services);
        if (configure is not null)
        {
            builder.Services.Configure(configure);
        }

        return builder;
    }

    /// <summary>Adds Snapper with settings bound from <paramref name="configuration"/> (usually the "Snapper" section).</summary>
    public static ISiloBuilder AddSnapper(this ISiloBuilder builder, IConfiguration configuration)
    {
        AddServices(builder.Services);
        builder.Services.Configure<SnapperOptions>(configuration);
        return builder;
    }

    private static void AddServices(IServiceCollection services)
    {
        // AddSnapper may be called more than once (a library and the app, or both overloads): every configuration
        // given applies, but the services are added once: a second WriteAheadLog lifecycle registration, for one,
        // would open the log twice and run two checkpoint loops.
        if (services.Any(d => d.ServiceType == typeof(SnapperServicesAdded)))
        {
            return;
        }

        services.AddSingleton(new SnapperServicesAdded());
        services.AddOptions<SnapperOptions>().ValidateOnStart();
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<SnapperOptions>, SnapperOptionsValidator>());
        services.TryAddSingleton(TimeProvider.System);
        services.TryAddSingleton<SnapperMetrics>();
        services.TryAddSingleton<TransactionalMethodTables>();
        services.TryAddSingleton<PactService>();
        services.TryAddSingleton<WriteAheadLog>();
        services.AddSingleton<ILifecycleParticipant<ISiloLifecycle>>(sp => sp.GetRequiredService<WriteAheadLog>());
        services.AddSingleton<ILifecycleParticipant<ISiloLifecycle>, TransactionalActorClassCheck>();
        services.TryAddSingleton<SnapperRuntime>();
        services.TryAddSingleton<ActorDirectory>();
        services.TryAddSingleton<SnapperTestHooks>();
    }

    /// <summary>Marks a service collection that <see cref="AddServices"/> has filled.</summary>
    private sealed class SnapperServicesAdded;
}
