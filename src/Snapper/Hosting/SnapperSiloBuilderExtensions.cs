using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Options;
using Orleans.Runtime.MembershipService.SiloMetadata;
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

        var announced = new SnapperOptions();
        configure?.Invoke(announced);
        return AnnounceRole(builder, announced);
    }

    /// <summary>Adds Snapper with settings bound from <paramref name="configuration"/> (usually the "Snapper" section).</summary>
    public static ISiloBuilder AddSnapper(this ISiloBuilder builder, IConfiguration configuration)
    {
        AddServices(builder.Services);
        builder.Services.Configure<SnapperOptions>(configuration);
        var announced = new SnapperOptions();
        configuration.Bind(announced);
        return AnnounceRole(builder, announced);
    }

    /// <summary>
    /// Shows Snapper's figures on Orleans' dashboard (the Microsoft.Orleans.Dashboard package, added to the silo with
    /// <c>AddDashboard()</c>): every silo's counters page then lists, beside Orleans' own counters, the transactions
    /// committed by mode (<c>snapper.txn.committed.Act</c>, <c>.Pact</c>) and aborted by reason
    /// (<c>snapper.txn.aborted.WaitDie</c>, ...), PACT batches and their mean size and commit lag, log bytes, flushes
    /// and fsyncs, and the last recovery's and checkpoint's duration. Snapper's own meter, "Snapper", is unchanged and
    /// remains what dotnet-counters and OpenTelemetry exporters read.
    /// </summary>
    public static ISiloBuilder AddSnapperDashboardCounters(this ISiloBuilder builder)
    {
        // Added once however often this is called: two registrations of the participant would be harmless (one
        // singleton), but the check keeps the service list as short as the intent.
        if (!builder.Services.Any(d => d.ServiceType == typeof(DashboardCounters)))
        {
            builder.Services.AddSingleton<DashboardCounters>();
            builder.Services.AddSingleton<ILifecycleParticipant<ISiloLifecycle>>(sp => sp.GetRequiredService<DashboardCounters>());
        }

        return builder;
    }

    /// <summary>
    /// A master or worker announces its role (and worker index) in Orleans' silo metadata, which every silo of the cluster
    /// caches; Snapper's placement director finds the master and each worker there (<see cref="Cluster.ClusterRoster"/>).
    /// </summary>
    private static ISiloBuilder AnnounceRole(ISiloBuilder builder, SnapperOptions options)
    {
        if (options.Role == SiloRole.Embedded)
        {
            return builder;
        }

        var metadata = new Dictionary<string, string> { [Cluster.ClusterRoster.MetadataKeys.Role] = options.Role.ToString() };
        if (options.Role == SiloRole.Worker)
        {
            metadata[Cluster.ClusterRoster.MetadataKeys.Worker] = options.WorkerIndex.ToString(System.Globalization.CultureInfo.InvariantCulture);
        }

        return builder.UseSiloMetadata(metadata);
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
        services.TryAddSingleton<Act.ParticipantWatchdog>();
        services.TryAddSingleton<WriteAheadLog>();
        services.AddSingleton<ILifecycleParticipant<ISiloLifecycle>>(sp => sp.GetRequiredService<WriteAheadLog>());
        services.AddSingleton<ILifecycleParticipant<ISiloLifecycle>, TransactionalActorClassCheck>();
        services.AddSingleton<ILifecycleParticipant<ISiloLifecycle>, WatchedDataFolderCheck>();
        services.TryAddSingleton<SnapperRuntime>();
        services.TryAddSingleton<SiloCallKeys>();
        services.AddSingleton<ILifecycleParticipant<ISiloLifecycle>, SiloKeyPrefetcher>();
        services.TryAddSingleton<Coordination.ActTidSource>();
        services.TryAddSingleton<Coordination.TidRanges>();
        services.TryAddSingleton<ActorDirectory>();
        services.TryAddSingleton<SnapperTestHooks>();
        services.TryAddSingleton<Cluster.ActorPlacementMap>();
        services.TryAddSingleton<Cluster.ClusterRoster>();
        services.TryAddSingleton<Cluster.SnapperPlacementDirector>();
        services.TryAddSingleton<Cluster.GlobalPactService>();
        services.AddSingleton<ILifecycleParticipant<ISiloLifecycle>, Cluster.InDoubtResolver>();
        services.AddSingleton<ILifecycleParticipant<ISiloLifecycle>, Cluster.WorkerLossWatcher>();
        services.TryAddSingleton<Migration.MigrationGate>();
        services.TryAddSingleton<Migration.MigrationInbox>();
        services.TryAddSingleton<Migration.PlacementDirectory>();
        // Also makes the silo read its copy of the placement directory as it starts, before it places any actor.
        services.AddSingleton<ILifecycleParticipant<ISiloLifecycle>, Migration.MigrationDirectoryRefresher>();
        services.AddPlacementDirector<Cluster.TransactionalActorPlacement>(sp => sp.GetRequiredService<Cluster.SnapperPlacementDirector>());
        services.AddPlacementDirector<Cluster.MasterPlacement>(sp => sp.GetRequiredService<Cluster.SnapperPlacementDirector>());
        services.AddPlacementDirector<Cluster.WorkerPlacement>(sp => sp.GetRequiredService<Cluster.SnapperPlacementDirector>());
        services.AddPlacementDirector<Cluster.SiloPlacement>(sp => sp.GetRequiredService<Cluster.SnapperPlacementDirector>());
    }

    /// <summary>Marks a service collection that <see cref="AddServices"/> has filled.</summary>
    private sealed class SnapperServicesAdded;
}
