using Orleans;
using Orleans.TestingHost;
using Snapper.Tests.Actors;
using Xunit;

namespace Snapper.Tests.Activation;

/// <summary>The ways Orleans ends an activation from inside or outside a grain.</summary>
public enum Ending
{
    /// <summary>The grain calls <c>DeactivateOnIdle()</c>.</summary>
    SelfDeactivate,

    /// <summary>Someone outside calls <c>DeactivateOnIdle</c> through the grain management extension.</summary>
    ExtensionDeactivate,

    /// <summary>
    /// The grain calls <c>MigrateOnIdle()</c>: with one silo it deactivates and comes back on the same one. (The grain
    /// management extension's <c>MigrateOnIdle</c> does nothing when placement picks the current silo, so it is
    /// covered by <see cref="MigrationTests"/>, with two silos.)
    /// </summary>
    SelfMigrate,
}

/// <summary>Asks Orleans to end an activation the way an <see cref="Ending"/> names.</summary>
public static class EndingExtensions
{
    /// <summary>Starts ending the activation of <paramref name="control"/>; Orleans finishes it once the activation is idle.</summary>
    public static Task Begin(this Ending ending, InProcessTestCluster cluster, IActivationControl control) => ending switch
    {
        Ending.SelfDeactivate => control.DeactivateSelf(),
        Ending.ExtensionDeactivate => cluster.DeactivateAsync(control),
        Ending.SelfMigrate => control.MigrateSelf(),
        _ => throw new ArgumentOutOfRangeException(nameof(ending), ending, null),
    };
}

/// <summary>
/// Committed state and uncommitted work survive the end of an actor's activation, with and without a log: the next
/// activation continues with the actor's silo-level core, at rest and with ACTs and PACTs in flight.
/// </summary>
public sealed class ActivationEndTests : IAsyncLifetime
{
    private readonly Durability.TemporaryFolder _folder = new();
    private InProcessTestCluster _memory = null!;
    private InProcessTestCluster _logged = null!;

    public async Task InitializeAsync()
    {
        // Long bounds: work held at a gate while an activation ends and a new one starts must end by the test's
        // release, however long a loaded machine takes to deactivate and reactivate.
        _memory = await ClusterFixture.StartAsync(ClusterFixture.UseLongBounds);
        _logged = await ClusterFixture.StartAsync(o =>
        {
            ClusterFixture.UseLongBounds(o);
            o.DataFolder = _folder.Path;
        });
    }

    public async Task DisposeAsync()
    {
        await _memory.DisposeAsync();
        await _logged.DisposeAsync();
        _folder.Dispose();
    }

    private InProcessTestCluster Cluster(bool logged) => logged ? _logged : _memory;

    /// <summary>Ends the activation of <paramref name="actor"/> and proves a new one serves it now.</summary>
    private static async Task EndActivation(InProcessTestCluster cluster, IAddressable actor, Ending ending)
    {
        var control = actor.Cast<IActivationControl>();
        var before = await control.WhoAmI();
        await ending.Begin(cluster, control);

        // Orleans holds calls that arrive while an activation deactivates and hands them to the next one, so this call
        // sees the new activation once the old one is gone (the first call may still be served by the old one if the
        // deactivation request is queued behind it; the second never is).
        var after = await control.WhoAmI();
        if (after.Activation == before.Activation)
        {
            after = await control.WhoAmI();
        }

        Assert.NotEqual(before.Activation, after.Activation);
    }

    public static TheoryData<Ending, bool> Endings()
    {
        var data = new TheoryData<Ending, bool>();
        foreach (var ending in Enum.GetValues<Ending>())
        {
            data.Add(ending, false);
            data.Add(ending, true);
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(Endings))]
    public async Task Committed_state_is_there_in_the_next_activation(Ending ending, bool logged)
    {
        var cluster = Cluster(logged);
        var grains = cluster.Client;
        var (a, b) = (ClusterFixture.NewId(), ClusterFixture.NewId());
        IBankAccount Account(long id) => grains.GetGrain<IBankAccount>(id);
        await Account(a).StartTxn(Account(a).Deposit, new Deposit(1, 100m));
        await Account(a).StartTxn(Account(a).Transfer, new Transfer(2, b, 30m));
        await Account(b).StartTxn(Account(b).Transfer, new Transfer(3, a, 5m), ActorAccessInfo.Of(Account(b), Account(a)));

        await EndActivation(cluster, Account(a), ending);
        await EndActivation(cluster, Account(b), ending);

        var states = await Account(a).StartTxn(Account(a).ReadAll, new[] { a, b });
        Assert.Equal([75m, 25m], states.Select(s => s.Balance));
        Assert.Equal([1L, 2, 3], states[0].Applied);
        Assert.Equal([2L, 3], states[1].Applied);

        // And the actors keep working on that state.
        await Account(a).StartTxn(Account(a).Transfer, new Transfer(4, b, 75m));
        Assert.Equal([0m, 100m], (await Account(a).StartTxn(Account(a).ReadAll, new[] { a, b })).Select(s => s.Balance));
    }

    public static TheoryData<Ending, bool, bool> EndingsInFlight()
    {
        var data = new TheoryData<Ending, bool, bool>();
        foreach (var ending in Enum.GetValues<Ending>())
        {
            foreach (var logged in new[] { false, true })
            {
                data.Add(ending, logged, false);
                data.Add(ending, logged, true);
            }
        }

        return data;
    }

    /// <summary>
    /// The participant has run its part when its activation ends: as an ACT it holds its lock, not yet prepared; as a
    /// PACT its sub-batch completed and its new version waits for the batch to commit.
    /// </summary>
    [Theory]
    [MemberData(nameof(EndingsInFlight))]
    public async Task Work_in_flight_commits_on_an_actor_whose_activation_ended(Ending ending, bool logged, bool pact)
    {
        var cluster = Cluster(logged);
        var (root, participant) = (ClusterFixture.NewId(), ClusterFixture.NewId());
        var gate = $"in-flight-{ending}-{logged}-{pact}-{root}";
        var grains = cluster.Client;
        var probe = grains.GetGrain<IProbe>(root);
        var input = new CallThenHold(participant, gate);

        var txn = pact
            ? probe.StartTxn(probe.CallThenHold, input, ActorAccessInfo.Of(probe, grains.GetGrain<IProbe>(participant)))
            : probe.StartTxn(probe.CallThenHold, input);
        await Gates.WhenReached(gate);
        await EndActivation(cluster, grains.GetGrain<IProbe>(participant), ending);
        Gates.Release(gate);
        await txn;

        Assert.Equal(1, await Read(cluster, root));
        Assert.Equal(1, await Read(cluster, participant));
    }

    private static async Task<int> Read(InProcessTestCluster cluster, long id)
    {
        var probe = cluster.Client.GetGrain<IProbe>(id);
        return await probe.StartTxn(probe.Read, 0);
    }
}

/// <summary>
/// With two silos, an actor migrated through the grain management extension (what rebalancing uses) takes its committed
/// state to the other silo.
/// </summary>
public sealed class MigrationTests : IAsyncLifetime
{
    private InProcessTestCluster _cluster = null!;

    public async Task InitializeAsync() => _cluster = await ClusterFixture.StartAsync(_ => { }, hooks: null, silos: 2);

    public Task DisposeAsync() => _cluster.DisposeAsync().AsTask();

    [Fact]
    public async Task An_actor_migrated_to_another_silo_keeps_its_committed_state()
    {
        var id = ClusterFixture.NewId();
        var account = _cluster.Client.GetGrain<IBankAccount>(id);
        await account.StartTxn(account.Deposit, new Deposit(1, 42m));
        var control = account.Cast<IActivationControl>();
        var before = await control.WhoAmI();
        var target = _cluster.Silos.Select(s => s.SiloAddress).First(s => !s.Equals(before.Silo));

        await _cluster.MigrateAsync(account, target);

        var after = await control.WhoAmI();
        Assert.NotEqual(before.Silo, after.Silo);
        var state = await account.StartTxn(account.Snapshot, 0);
        Assert.Equal(42m, state.Balance);
        Assert.Equal([1L], state.Applied);
    }
}
