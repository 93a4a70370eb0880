using System.Collections.Immutable;
using System.Reflection;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Orleans.Runtime.MembershipService.SiloMetadata;
using Snapper.Cluster;
using Snapper.Hosting;
using Xunit;

using static Snapper.Tests.Cluster.MembershipOf;

namespace Snapper.Tests.Cluster;

/// <summary>
/// What the master's roster learns about workers from Orleans' membership and silo metadata, given in the order Orleans
/// delivers them: a silo's metadata reaches the cache after the membership update that shows it active, and leaves it
/// with the update that shows it dead.
/// </summary>
public sealed class ClusterRosterTests
{
    private readonly Membership _membership = new();
    private readonly MetadataCache _metadata = new();

    [Fact]
    public void The_master_learns_a_worker_whose_metadata_came_after_the_update_that_showed_it_active_and_reports_its_death()
    {
        var roster = Roster(SiloRole.Master);
        _membership.Show((Master, SiloStatus.Active), (Worker1, SiloStatus.Active));
        Assert.False(roster.LearnWorkers()); // its metadata is on the way: the watcher looks again
        Assert.Null(roster.Seen.WorkerOf(Worker1));

        _metadata.Announce(Worker1, worker: 1); // no membership update comes with it
        Assert.True(roster.LearnWorkers());

        // The restarted worker declares its predecessor dead; the cache drops the dead silo's metadata.
        _membership.Show((Master, SiloStatus.Active), (Worker1, SiloStatus.Dead), (Restarted, SiloStatus.Joining));
        _metadata.Drop(Worker1);
        Assert.Equal([1], roster.Seen.NewlyLost(_membership.CurrentSnapshot));
    }

    [Fact]
    public void A_placement_on_a_worker_teaches_the_master_but_not_a_worker()
    {
        _membership.Show((Master, SiloStatus.Active), (Worker1, SiloStatus.Active), (Restarted, SiloStatus.Active));
        _metadata.Announce(Worker1, worker: 1);
        _metadata.Announce(Restarted, worker: 0);

        var master = Roster(SiloRole.Master);
        Assert.Equal(Worker1, master.RequireWorker(1));
        Assert.Equal(1, master.Seen.WorkerOf(Worker1));

        var worker = Roster(SiloRole.Worker, local: Restarted);
        Assert.Equal(Worker1, worker.RequireWorker(1));
        Assert.Null(worker.Seen.WorkerOf(Worker1));
    }

    private ClusterRoster Roster(SiloRole role, SiloAddress? local = null) => new(
        Options.Create(new SnapperOptions { Role = role, Workers = 2 }),
        new ServiceCollection().AddSingleton<ISiloMetadataCache>(_metadata).BuildServiceProvider(),
        new LocalSilo(local ?? Master), _membership);

    private sealed class Membership : IClusterMembershipService
    {
        private int _version;

        public ClusterMembershipSnapshot CurrentSnapshot { get; private set; } =
            new(ImmutableDictionary<SiloAddress, ClusterMember>.Empty, MembershipVersion.MinValue);

        public IAsyncEnumerable<ClusterMembershipSnapshot> MembershipUpdates => throw new NotSupportedException();

        public void Show(params (SiloAddress Silo, SiloStatus Status)[] members) => CurrentSnapshot = MembershipOf.Snapshot(++_version, members);

        public ValueTask Refresh(MembershipVersion minimumVersion = default, CancellationToken cancellationToken = default) => default;

        public Task<bool> TryKill(SiloAddress siloAddress) => Task.FromResult(false);
    }

    private sealed class MetadataCache : ISiloMetadataCache
    {
        // Orleans fills SiloMetadata only inside its runtime; the test sets the two entries a Snapper silo announces.
        private static readonly MethodInfo AddMetadata = typeof(SiloMetadata).GetMethod(
            "AddMetadata", BindingFlags.Instance | BindingFlags.NonPublic, [typeof(string), typeof(string)])!;

        private readonly Dictionary<SiloAddress, SiloMetadata> _known = [];

        public SiloMetadata GetSiloMetadata(SiloAddress siloAddress) => _known.GetValueOrDefault(siloAddress) ?? SiloMetadata.Empty;

        public void Announce(SiloAddress silo, int worker)
        {
            var metadata = new SiloMetadata();
            AddMetadata.Invoke(metadata, [ClusterRoster.MetadataKeys.Role, nameof(SiloRole.Worker)]);
            AddMetadata.Invoke(metadata, [ClusterRoster.MetadataKeys.Worker, worker.ToString(System.Globalization.CultureInfo.InvariantCulture)]);
            _known[silo] = metadata;
        }

        public void Drop(SiloAddress silo) => _known.Remove(silo);
    }

    private sealed class LocalSilo(SiloAddress address) : ILocalSiloDetails
    {
        public string Name => "test";

        public string ClusterId => "test";

        public string DnsHostName => "localhost";

        public SiloAddress SiloAddress => address;

        public SiloAddress GatewayAddress => address;
    }
}
