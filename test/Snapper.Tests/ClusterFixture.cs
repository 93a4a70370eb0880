using Microsoft.Extensions.DependencyInjection;
using Orleans.TestingHost;
using Snapper.Hosting;
using Xunit;

namespace Snapper.Tests;

/// <summary>One in-process silo with Snapper and short timeouts, shared by the tests of the "cluster" collection.</summary>
public class ClusterFixture : IAsyncLifetime
{
    private static long _nextId = 1_000;

    public InProcessTestCluster Cluster { get; private set; } = null!;

    public IClusterClient Client => Cluster.Client;

    /// <summary>Fresh actor ids, so that tests sharing the silo never touch each other's actors.</summary>
    public static long[] NewIds(int count)
    {
        var last = Interlocked.Add(ref _nextId, count);
        return Enumerable.Range(0, count).Select(i => last - count + i).ToArray();
    }

    public static long NewId() => NewIds(1)[0];

    public async Task InitializeAsync() => Cluster = await StartAsync(Configure, Hooks);

    /// <summary>Starts one in-process silo with Snapper, short timeouts, and <paramref name="configure"/> on top.</summary>
    public static Task<InProcessTestCluster> StartAsync(Action<SnapperOptions> configure) => StartAsync(configure, hooks: null);

    /// <summary>The same, with test-only switches and fault injection (<paramref name="hooks"/>).</summary>
    internal static async Task<InProcessTestCluster> StartAsync(Action<SnapperOptions> configure, SnapperTestHooks? hooks, int silos = 1)
    {
        var builder = new InProcessTestClusterBuilder((short)silos);
        builder.ConfigureSilo((_, silo) => silo.ConfigureServices(services =>
        {
            if (hooks is not null)
            {
                services.AddSingleton(hooks);
            }
        }).AddSnapper(o =>
        {
            o.Coordinators = 4;
            o.LockWaitTimeout = TimeSpan.FromSeconds(2);
            o.ExecutionTimeout = TimeSpan.FromSeconds(5);
            o.PrepareTimeout = TimeSpan.FromSeconds(3);
            o.ParticipantTimeout = TimeSpan.FromSeconds(6);
            o.DecisionTimeout = TimeSpan.FromSeconds(2);
            o.OutcomeRetention = TimeSpan.FromSeconds(30);
            configure(o);
        }));
        builder.ConfigureClient(client => client.AddSnapperClient());
        var cluster = builder.Build();
        await cluster.DeployAsync();
        return cluster;
    }

    public async Task DisposeAsync() => await Cluster.DisposeAsync();

    /// <summary>Changes the Snapper settings of this fixture's silo.</summary>
    protected virtual void Configure(SnapperOptions options)
    {
    }

    /// <summary>Test-only switches of this fixture's silo (none by default).</summary>
    internal virtual SnapperTestHooks? Hooks => null;
}

/// <summary>A silo whose ACT reads take no locks: a deliberately broken schedule for the checker to catch.</summary>
public sealed class UnsafeReadsClusterFixture : ClusterFixture
{
    internal override SnapperTestHooks Hooks { get; } = new() { SkipReadLocks = true };
}

/// <summary>A silo whose ACTs skip the hybrid serializability check and commit without waiting for the batches they read.</summary>
public sealed class UnsafeHybridClusterFixture : ClusterFixture
{
    internal override SnapperTestHooks Hooks { get; } = new() { SkipHybridGate = true };
}

/// <summary>A silo with the stricter hybrid rule: ACTs enter an actor only when no batch is uncommitted there.</summary>
public sealed class CommittedBatchesOnlyClusterFixture : ClusterFixture
{
    protected override void Configure(SnapperOptions options) => options.HybridScheduling = HybridScheduling.CommittedBatchesOnly;
}

/// <summary>The stricter hybrid rule with its gate removed: ACTs and PACT batches run over each other on an actor.</summary>
public sealed class UnsafeCommittedBatchesOnlyClusterFixture : ClusterFixture
{
    protected override void Configure(SnapperOptions options) => options.HybridScheduling = HybridScheduling.CommittedBatchesOnly;

    internal override SnapperTestHooks Hooks { get; } = new() { SkipHybridGate = true };
}

[CollectionDefinition(Name)]
public sealed class ClusterCollection : ICollectionFixture<ClusterFixture>
{
    public const string Name = "cluster";
}
