using System.Collections.Immutable;
using System.Net;
using Snapper.Cluster;
using Xunit;

using static Snapper.Tests.Cluster.MembershipOf;

namespace Snapper.Tests.Cluster;

/// <summary>
/// How the master tells a lost worker from membership (<see cref="WorkerSiloHistory"/>), in the orders Orleans delivers
/// its pieces: a silo's metadata reaches the cache after the membership update that shows it active, and leaves it with
/// the update that shows it dead.
/// </summary>
public sealed class WorkerSiloHistoryTests
{
    private int _version;

    [Fact]
    public void A_worker_whose_metadata_came_after_the_last_update_is_still_reported_when_it_dies()
    {
        // The order that lost a worker before: the last update shows worker 1 active while its metadata is unknown (the
        // watcher learns nothing from it), the metadata arrives with no update after it, then the restarted worker's
        // update shows the first silo dead and, by the time it is read, the new silo active.
        var history = new WorkerSiloHistory();
        Assert.Empty(history.NewlyLost(Snapshot((Master, SiloStatus.Active), (Worker1, SiloStatus.Active))));

        history.Learned(Worker1, 1); // a placement on worker 1, or the watcher's next look
        history.Learned(Restarted, 1);
        Assert.Equal([1], history.NewlyLost(Snapshot((Master, SiloStatus.Active), (Worker1, SiloStatus.Dead), (Restarted, SiloStatus.Active))));
    }

    [Fact]
    public void A_dead_worker_is_reported_once_and_forgotten_when_membership_drops_it()
    {
        var history = new WorkerSiloHistory();
        history.Learned(Worker1, 1);
        Assert.Empty(history.NewlyLost(Snapshot((Master, SiloStatus.Active), (Worker1, SiloStatus.Active))));
        Assert.Equal([1], history.NewlyLost(Snapshot((Master, SiloStatus.Active), (Worker1, SiloStatus.Dead))));
        Assert.Empty(history.NewlyLost(Snapshot((Master, SiloStatus.Active), (Worker1, SiloStatus.Dead), (Restarted, SiloStatus.Joining))));

        // Orleans removes a defunct silo's entry eventually: the history lets go of it then.
        Assert.Empty(history.NewlyLost(Snapshot((Master, SiloStatus.Active), (Restarted, SiloStatus.Active))));
        Assert.Null(history.WorkerOf(Worker1));
    }

    [Fact]
    public void Silos_never_seen_as_workers_and_silos_not_listed_yet_are_not_reported_nor_forgotten()
    {
        var history = new WorkerSiloHistory();

        // The master's death, or a silo whose metadata nobody read, tells nothing about any worker.
        Assert.Empty(history.NewlyLost(Snapshot((Master, SiloStatus.Dead), (Worker1, SiloStatus.Dead))));

        // Learned from a snapshot newer than the one being read: kept until it is listed, and reported when it dies.
        history.Learned(Restarted, 0);
        Assert.Empty(history.NewlyLost(Snapshot((Master, SiloStatus.Active))));
        Assert.Equal(0, history.WorkerOf(Restarted));
        Assert.Equal([0], history.NewlyLost(Snapshot((Master, SiloStatus.Active), (Restarted, SiloStatus.Dead))));
    }

    private ClusterMembershipSnapshot Snapshot(params (SiloAddress Silo, SiloStatus Status)[] members) => MembershipOf.Snapshot(++_version, members);
}

/// <summary>Membership snapshots of a master and a worker's two incarnations, as Orleans would show them.</summary>
internal static class MembershipOf
{
    public static readonly SiloAddress Master = SiloAddress.New(IPAddress.Loopback, 11110, 1);
    public static readonly SiloAddress Worker1 = SiloAddress.New(IPAddress.Loopback, 11111, 1);
    public static readonly SiloAddress Restarted = SiloAddress.New(IPAddress.Loopback, 11112, 2);

    public static ClusterMembershipSnapshot Snapshot(int version, params (SiloAddress Silo, SiloStatus Status)[] members) =>
        new(members.ToImmutableDictionary(m => m.Silo, m => new ClusterMember(m.Silo, m.Status, m.Silo.ToString())),
            new MembershipVersion(version));
}
