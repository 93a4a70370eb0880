using Microsoft.Extensions.DependencyInjection;
using Orleans.Configuration;
using Orleans.TestingHost;
using Snapper.Hosting;
using Snapper.Tests.Actors;
using Xunit;

namespace Snapper.Tests;

/// <summary>One in-process silo with Snapper and short timeouts, shared by the tests of the "cluster" collection.</summary>
public class ClusterFixture : IAsyncLifetime
{
    private static long _nextId = 1_000;

    /// <summary>
    /// How long the test client waits for a call's answer, instead of Orleans' 30 s. One StartTxn passes several of
    /// Snapper's own bounds in a row (waiting out a migration, ordering, execution, 2PC, the log), each of which ends in
    /// a typed abort, and a call may span a silo's stop and start; on a starved machine their sum can pass 30 s (a long
    /// random history with hot actors moving between workers did, with four test processes on two cores, and a random
    /// history on one silo did with three). A test then fails by Snapper's bounds, not by the client's. A test that claims
    /// a mechanism answers before a bound of Snapper's says so with a stopwatch over that mechanism's steps, never by
    /// leaving it to the client's timeout.
    /// </summary>
    public static readonly TimeSpan ClientResponseTimeout = TimeSpan.FromMinutes(3);

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

    /// <summary>
    /// Starts one in-process silo with Snapper, short timeouts, and <paramref name="configure"/> on top;
    /// <paramref name="configureSilo"/> may change the silo further.
    /// </summary>
    public static Task<InProcessTestCluster> StartAsync(Action<SnapperOptions> configure, Action<ISiloBuilder>? configureSilo = null) =>
        StartAsync(configure, hooks: null, configureSilo: configureSilo);

    /// <summary>The same, with test-only switches and fault injection (<paramref name="hooks"/>) and <paramref name="silos"/> silos.</summary>
    internal static async Task<InProcessTestCluster> StartAsync(Action<SnapperOptions> configure, SnapperTestHooks? hooks, int silos = 1,
        Action<ISiloBuilder>? configureSilo = null, Action<string, SnapperOptions>? configureBySiloName = null,
        Action<IClientBuilder>? configureClient = null)
    {
        var builder = new InProcessTestClusterBuilder((short)silos);
        builder.ConfigureSilo((siloOptions, silo) =>
        {
            if (hooks is not null)
            {
                silo.Services.AddSingleton(hooks);
            }

            silo.AddSnapper(o =>
            {
                o.Coordinators = 4;
                o.LockWaitTimeout = TimeSpan.FromSeconds(2);
                o.ExecutionTimeout = TimeSpan.FromSeconds(5);
                o.PrepareTimeout = TimeSpan.FromSeconds(3);
                o.ParticipantTimeout = TimeSpan.FromSeconds(6);
                o.DecisionTimeout = TimeSpan.FromSeconds(2);
                o.OutcomeRetention = TimeSpan.FromSeconds(30);
                configure(o);
                configureBySiloName?.Invoke(siloOptions.SiloName, o);
            });

            // The actor classes Snapper must refuse are grain classes of this assembly like every other, so Orleans
            // would host them here too and Snapper would refuse to start; only the tests about them add one back.
            silo.Services.PostConfigure<GrainTypeOptions>(o => o.Classes.ExceptWith(DuplicateMethodActors.All));
            configureSilo?.Invoke(silo);
        });
        builder.ConfigureClient(client =>
        {
            client.AddSnapperClient();
            client.Configure<ClientMessagingOptions>(o => o.ResponseTimeout = ClientResponseTimeout);
            configureClient?.Invoke(client);
        });
        var cluster = builder.Build();
        try
        {
            await cluster.DeployAsync();
        }
        catch
        {
            // Tests that expect a refused start get the error; the client and any silo started are stopped first.
            await cluster.DisposeAsync();
            throw;
        }

        return cluster;
    }

    public async Task DisposeAsync() => await Cluster.DisposeAsync();

    /// <summary>
    /// Bounds for staged tests, in place of the short defaults above: no bound that could end a transaction held across
    /// staged steps fires before the step that releases it (a CI run once stretched one such step past 2 s).
    /// </summary>
    public static void UseLongBounds(SnapperOptions options)
    {
        options.LockWaitTimeout = TimeSpan.FromSeconds(50);
        options.ExecutionTimeout = TimeSpan.FromSeconds(60);
        options.ParticipantTimeout = TimeSpan.FromSeconds(90);
        options.OutcomeRetention = TimeSpan.FromMinutes(5);
    }

    /// <summary>Changes the Snapper settings of this fixture's silo.</summary>
    protected virtual void Configure(SnapperOptions options)
    {
    }

    /// <summary>Test-only switches of this fixture's silo (none by default).</summary>
    internal virtual SnapperTestHooks? Hooks => null;
}

/// <summary>A silo whose lock bound is short (2 s) and whose other bounds are long, so lock bounds decide alone.</summary>
public sealed class LockBoundsClusterFixture : ClusterFixture
{
    protected override void Configure(SnapperOptions options)
    {
        UseLongBounds(options);
        options.LockWaitTimeout = TimeSpan.FromSeconds(2);
    }
}

/// <summary>
/// A silo whose bounds that could end a held transaction (lock 50 s, execution 60 s, participant 90 s) outlast any delay
/// a loaded machine adds between two staged steps: a test that holds a transaction at a gate, or makes it wait for a
/// lock or a batch, sees the wait end by the step it stages next (a release, a grant, a wait-die abort), never by a bound.
/// </summary>
public sealed class LongBoundsClusterFixture : ClusterFixture
{
    protected override void Configure(SnapperOptions options) => UseLongBounds(options);
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

/// <summary>
/// A silo that logs, fsync and all, to a folder of its own: batch commit records then become durable some time after
/// they are queued, and an ACT that read a batch's writes commits in between (ActCoordinator's hybrid commit rule).
/// </summary>
public sealed class LoggedClusterFixture : ClusterFixture, IDisposable
{
    private readonly Durability.TemporaryFolder _data = new();

    protected override void Configure(SnapperOptions options) => options.DataFolder = _data.Path;

    public void Dispose() => _data.Dispose();
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
