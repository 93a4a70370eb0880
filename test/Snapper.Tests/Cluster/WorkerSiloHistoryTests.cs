using System.Collections.Immutable;
using System.Net;
using Snapper.Cluster;
using Xunit;

namespace Snapper.Tests.Cluster;

/// <summary>
/// How the master tells a lost worker from membership (<see cref="WorkerSiloHistory"/>), in the orders Orleans delivers
/// its pieces: a silo's metadata reaches the cache after the membership update that shows it active, and leaves it with
/// the update that shows it dead.
/// </summary>
public sealed class WorkerSiloHistoryTests
{
    private static readonly SiloAddress First = SiloAddress.New(IPAddress.Loopback, 11111, 1);
    private static readonly SiloAddress Restarted = SiloAddress.New(IPAddress.Loopback, 11112, 2);
    private static readonly SiloAddress Master = SiloAddress.New(IPAddress.Loopback, 11110, 1);
    private int _version;

    [Fact]
    public void A_worker_whose_metadata_came_after_the_last_update_is_still_reported_when_it_dies()
    {
        // The order that lost a worker before: the last update shows worker 1 active while its metadata is unknown (the
        // watcher learns nothing from it), the metadata arrives with no update after it, then the restarted worker's
        // update shows the first silo dead and, by the time it is read, the new silo active.
        var history = new WorkerSiloHistory();
        Assert.Empty(history.NewlyLost(Snapshot((Master, SiloStatus.Active), (First, SiloStatus.Active))));

        history.Learned(First, 1); // a placement on worker 1, or the watcher's next look
        history.Learned(Restarted, 1);
        Assert.Equal([1], history.NewlyLost(Snapshot((Master, SiloStatus.Active), (First, SiloStatus.Dead), (Restarted, SiloStatus.Active))));
    }

    [Fact]
    public void A_dead_worker_is_reported_once_and_forgotten_when_membership_drops_it()
    {
        var history = new WorkerSiloHistory();
        history.Learned(First, 1);
        Assert.Empty(history.NewlyLost(Snapshot((Master, SiloStatus.Active), (First, SiloStatus.Active))));
        Assert.Equal([1], history.NewlyLost(Snapshot((Master, SiloStatus.Active), (First, SiloStatus.Dead))));
        Assert.Empty(history.NewlyLost(Snapshot((Master, SiloStatus.Active), (First, SiloStatus.Dead), (Restarted, SiloStatus.Joining))));

        // Orleans removes a defunct silo's entry eventually: the history lets go of it then.
        Assert.Empty(history.NewlyLost(Snapshot((Master, SiloStatus.Active), (Restarted, SiloStatus.Active))));
        Assert.Null(history.WorkerOf(First));
    }

    [Fact]
    public void Silos_never_seen_as_workers_and_silos_not_listed_yet_are_not_reported_nor_forgotten()
    {
        var history = new WorkerSiloHistory();

        // The master's death, or a silo whose metadata nobody read, tells nothing about any worker.
        Assert.Empty(history.NewlyLost(Snapshot((Master, SiloStatus.Dead), (First, SiloStatus.Dead))));

        // Learned from a snapshot newer than the one being read: kept until it is listed, and reported when it dies.
        history.Learned(Restarted, 0);
        Assert.Empty(history.NewlyLost(Snapshot((Master, SiloStatus.Active))));
        Assert.Equal(0, history.WorkerOf(Restarted));
        Assert.Equal([0], history.NewlyLost(Snapshot((Master, SiloStatus.Active), (Restarted, SiloStatus.Dead))));
    }

    private ClusterMembershipSnapshot Snapshot(params (SiloAddress Silo, SiloStatus Status)[] members) =>
        new(members.ToImmutableDictionary(m => m.Silo, m => new ClusterMember(m.Silo, m.Status, m.Silo.ToString())),
            new MembershipVersion(++_version));
}
