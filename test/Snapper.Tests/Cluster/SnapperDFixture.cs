using Microsoft.Extensions.DependencyInjection;
using Orleans.TestingHost;
using Snapper.Cluster;
using Snapper.Hosting;
using Xunit;

namespace Snapper.Tests.Cluster;

/// <summary>
/// A SnapperD cluster in one process: silo 0 is the master, silos 1 and 2 are workers 0 and 1. Tests use actor ids
/// from <see cref="ClusterFixture.NewIds"/> and <see cref="OnWorker"/> to put actors where they need them.
/// </summary>
public class SnapperDFixture : IAsyncLifetime
{
    public const int Workers = 2;

    public InProcessTestCluster Cluster { get; private set; } = null!;

    public IClusterClient Client => Cluster.Client;

    public virtual async Task InitializeAsync()
    {
        Cluster = await ClusterFixture.StartAsync(Configure, Hooks, silos: 1 + Workers, configureBySiloName: (name, o) =>
            {
                var index = int.Parse(name[(name.LastIndexOf('_') + 1)..], System.Globalization.CultureInfo.InvariantCulture);
                o.Workers = Workers;
                o.Role = index == 0 ? SiloRole.Master : SiloRole.Worker;
                o.WorkerIndex = Math.Max(0, index - 1);
                ConfigureSilo(index, o);
            });

        // Every silo must know the master and every worker (silo metadata travels with membership) before a test places actors.
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
        while (!Cluster.Silos.All(KnowsEveryone))
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException("the silos did not learn each other's roles within 30 s");
            }

            await Task.Delay(50);
        }

        static bool KnowsEveryone(SiloHandle silo)
        {
            var roster = ((InProcessSiloHandle)silo).SiloHost.Services.GetRequiredService<ClusterRoster>();
            return roster.MasterSilo is not null && Enumerable.Range(0, Workers).All(w => roster.WorkerSilo(w) is not null);
        }
    }

    /// <summary>Fault injection shared by every silo (all off unless a test sets one and clears it after).</summary>
    internal SnapperTestHooks Hooks { get; } = new();

    /// <summary>Settings of every silo; the defaults here (the serializability check for hybrid scheduling).</summary>
    protected virtual void Configure(SnapperOptions options)
    {
    }

    /// <summary>Settings of silo <paramref name="index"/> (0 the master, then the workers), after <see cref="Configure"/>; none by default.</summary>
    protected virtual void ConfigureSilo(int index, SnapperOptions options)
    {
    }

    public async Task DisposeAsync() => await Cluster.DisposeAsync();

    /// <summary>The worker an actor is placed on (the default hash placement).</summary>
    public int WorkerOf(GrainId actor) => (int)(actor.GetUniformHashCode() % (uint)Workers);

    /// <summary><paramref name="count"/> fresh account ids whose actors are placed on <paramref name="worker"/>.</summary>
    public long[] OnWorker(int worker, int count) => OnWorker<Actors.IBankAccount>(worker, count);

    /// <summary><paramref name="count"/> fresh ids whose <typeparamref name="TActor"/> actors are placed on <paramref name="worker"/>.</summary>
    public long[] OnWorker<TActor>(int worker, int count) where TActor : IGrainWithIntegerKey
    {
        var ids = new List<long>();
        while (ids.Count < count)
        {
            var id = ClusterFixture.NewId();
            if (WorkerOf(Client.GetGrain<TActor>(id).GetGrainId()) == worker)
            {
                ids.Add(id);
            }
        }

        return [.. ids];
    }

    /// <summary>The silo services of worker <paramref name="worker"/> (silo 1 + worker).</summary>
    internal IServiceProvider WorkerServices(int worker) => ((InProcessSiloHandle)Cluster.Silos[1 + worker]).SiloHost.Services;

    internal IServiceProvider MasterServices => ((InProcessSiloHandle)Cluster.Silos[0]).SiloHost.Services;
}

[CollectionDefinition(Name)]
public sealed class SnapperDCollection : ICollectionFixture<SnapperDFixture>
{
    public const string Name = "snapperd";
}

/// <summary>
/// The same cluster with every bound that could end a held transaction long (lock 50 s, execution 60 s, participant
/// 90 s), for staged tests that hold a batch or an ACT across several steps: only the step that releases it ends it.
/// </summary>
public sealed class LongBoundsSnapperDFixture : SnapperDFixture
{
    protected override void Configure(SnapperOptions options) => ClusterFixture.UseLongBounds(options);
}

/// <summary>The same cluster with the stricter hybrid rule, <see cref="HybridScheduling.CommittedBatchesOnly"/>.</summary>
public sealed class CommittedBatchesOnlySnapperDFixture : SnapperDFixture
{
    protected override void Configure(SnapperOptions options) => options.HybridScheduling = HybridScheduling.CommittedBatchesOnly;
}

/// <summary>
/// The same cluster with every bound of the protocol tight (tens to hundreds of milliseconds), so that random histories
/// keep crossing execution, lock, prepare and decision bounds: the abort paths those bounds take run thousands of
/// times per history instead of a few times under load.
/// </summary>
public sealed class TightBoundsSnapperDFixture : SnapperDFixture
{
    /// <summary>
    /// A worker refuses actors until it has read the master's placement directory, within ExecutionTimeout of its start;
    /// with the bound this tight that read may come later, so the fixture waits until an actor on each worker answers.
    /// </summary>
    public override async Task InitializeAsync()
    {
        // Histories on this cluster record their ACTs' steps, printed for the transactions a failed check names.
        Hooks.ActTrace = Serializability.ActTraces.Record;
        await base.InitializeAsync();
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
        for (var worker = 0; worker < Workers; worker++)
        {
            var probe = Client.GetGrain<Serializability.IHistoryActor>(OnWorker<Serializability.IHistoryActor>(worker, 1)[0]);
            while (true)
            {
                try
                {
                    await probe.StartTxn(probe.Writers, 0);
                    break;
                }
                catch (WorkerUnavailableException) when (DateTime.UtcNow < deadline)
                {
                    await Task.Delay(50);
                }
            }
        }
    }

    protected override void Configure(SnapperOptions options)
    {
        options.ExecutionTimeout = TimeSpan.FromMilliseconds(150);
        options.LockWaitTimeout = TimeSpan.FromMilliseconds(40);
        options.HybridWaitTimeout = TimeSpan.FromMilliseconds(60);
        options.PrepareTimeout = TimeSpan.FromMilliseconds(80);
        options.ParticipantTimeout = TimeSpan.FromMilliseconds(200);
        options.DecisionTimeout = TimeSpan.FromMilliseconds(60);
        options.OutcomeRetention = TimeSpan.FromSeconds(30);
    }
}
