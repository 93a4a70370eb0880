using Microsoft.Extensions.DependencyInjection;
using Orleans.TestingHost;
using Snapper.Act;
using Snapper.Actors;
using Snapper.Tests.Actors;
using Xunit;

namespace Snapper.Tests;

/// <summary>
/// Snapper's internal entry points (a call inside a transaction, 2PC) refuse callers that are not Snapper in a silo: a
/// client with a made-up context can neither join a transaction nor take a lock, whatever stamp it makes up, and the
/// actor stays free.
/// </summary>
[Collection(ClusterCollection.Name)]
public sealed class EntryPointTests(ClusterFixture fixture)
{
    private IGrainFactory Grains => fixture.Client;

    /// <summary>Stamps a client can make: none, and the silo's real address with a key of its own.</summary>
    public static TheoryData<bool> ForgedStamps => new() { false, true };

    private SiloStamp Forge(bool namesTheSilo) =>
        namesTheSilo ? new SiloStamp(fixture.Cluster.Silos[0].SiloAddress, Guid.NewGuid()) : default;

    [Theory]
    [MemberData(nameof(ForgedStamps))]
    public async Task A_client_calling_execute_with_a_made_up_context_is_refused_and_holds_no_lock(bool namesTheSilo)
    {
        var id = ClusterFixture.NewId();
        var probe = Grains.GetGrain<IProbe>(id);
        var forged = new TxnContext(1, TxnMode.Act, probe.GetGrainId());

        var refused = await Assert.ThrowsAsync<SnapperEntryPointException>(() =>
            Grains.GetGrain<IActorCallee>(probe.GetGrainId()).ExecuteCall(new CallRequest(Forge(namesTheSilo), forged, nameof(IProbe.Increment), 5)).AsTask());
        Assert.Equal(nameof(IActorCallee.ExecuteCall), refused.Method);

        // Nothing was locked or changed: an ACT and a PACT on the actor commit at once.
        await probe.StartTxn(probe.Increment, 1);
        await probe.StartTxn(probe.Increment, 1, ActorAccessInfo.Of(probe));
        Assert.Equal(2, await probe.StartTxn(probe.Read, 0));
    }

    [Theory]
    [MemberData(nameof(ForgedStamps))]
    public async Task A_client_calling_two_phase_commit_is_refused(bool namesTheSilo)
    {
        var participant = Grains.GetGrain<IActParticipant>(Grains.GetGrain<IProbe>(ClusterFixture.NewId()).GetGrainId());
        var stamp = Forge(namesTheSilo);

        await Assert.ThrowsAsync<SnapperEntryPointException>(() => participant.Prepare(new ActPhaseRequest(stamp, 1, default)));
        await Assert.ThrowsAsync<SnapperEntryPointException>(() => participant.Commit(new ActPhaseRequest(stamp, 1, default)));
        await Assert.ThrowsAsync<SnapperEntryPointException>(() => participant.Abort(stamp, 1));
        await Assert.ThrowsAsync<SnapperEntryPointException>(() => participant.Resolve(stamp, 1, participant.GetGrainId()));
    }

    [Fact]
    public async Task A_client_cannot_ask_a_silo_for_its_key()
    {
        var silo = fixture.Cluster.Silos[0].SiloAddress;

        await Assert.ThrowsAsync<SnapperEntryPointException>(() => Grains.GetGrain<ISiloKeyGrain>(silo.ToParsableString()).Key());
    }
}

/// <summary>
/// Two silos: an actor admits the internal calls of an actor on the other silo once it asked that silo for its key, and
/// refuses a stamp that names the other silo, or a silo that does not exist, with a key that is not that silo's.
/// </summary>
public sealed class SiloCallKeyTests : IAsyncLifetime
{
    private InProcessTestCluster _cluster = null!;

    public async Task InitializeAsync() => _cluster = await ClusterFixture.StartAsync(_ => { }, hooks: null, silos: 2);

    public Task DisposeAsync() => _cluster.DisposeAsync().AsTask();

    [Fact]
    public async Task Each_silo_learns_the_others_key_from_membership_so_acts_across_them_ask_nothing()
    {
        var (first, second) = await OnEachSilo();
        var (firstKeys, secondKeys) = (Keys(first.Silo), Keys(second.Silo));
        await Staged.Until(() => firstKeys.Knows(second.Silo) && secondKeys.Knows(first.Silo), "each silo asks the other for its key as it sees it active");
        var from = _cluster.Client.GetGrain<IBankAccount>(first.Id);
        await from.StartTxn(from.Reset, 100m);
        var lookupsBefore = (firstKeys.Lookups, secondKeys.Lookups);

        for (var i = 1; i <= 3; i++)
        {
            await from.StartTxn(from.Transfer, new Transfer(i, second.Id, 10m));
        }

        var to = _cluster.Client.GetGrain<IBankAccount>(second.Id);
        Assert.Equal(70m, await from.StartTxn(from.Balance, 0));
        Assert.Equal(30m, await to.StartTxn(to.Balance, 0));
        // Every call and 2PC message between the silos was admitted with the key learned beforehand.
        Assert.Equal(lookupsBefore, (firstKeys.Lookups, secondKeys.Lookups));
    }

    [Fact]
    public async Task Calls_that_need_a_key_being_asked_share_the_question_and_a_forgotten_key_is_asked_again()
    {
        var (first, second) = await OnEachSilo();
        var keys = Keys(second.Silo);
        var stamp = Keys(first.Silo).Own;
        await Staged.Until(() => keys.Knows(first.Silo), "the second silo learns the first's key");

        // Counted before the key is forgotten: the prefetcher may ask again on its own meanwhile (SiloKeyPrefetcher), and
        // the calls below then share its question. Either way, one question.
        var before = keys.Lookups;
        keys.Forget(first.Silo);
        // Both before either could have its answer (the question is a call to the other silo): one question for both.
        var calls = new[] { keys.VerifyAsync(stamp, "test").AsTask(), keys.VerifyAsync(stamp, "test").AsTask() };
        await Task.WhenAll(calls);
        Assert.Equal(before + 1, keys.Lookups);
        Assert.True(keys.Knows(first.Silo));
        await Assert.ThrowsAsync<SnapperEntryPointException>(() => keys.VerifyAsync(new SiloStamp(first.Silo, Guid.NewGuid()), "test").AsTask());
        Assert.Equal(before + 1, keys.Lookups);
    }

    [Fact]
    public async Task A_key_lost_while_its_silo_stays_active_is_asked_again_without_a_call()
    {
        var (first, second) = await OnEachSilo();
        var keys = Keys(second.Silo);
        await Staged.Until(() => keys.Knows(first.Silo), "the second silo learns the first's key");

        // Forgetting it stands for a question that failed (it is dropped the same way). Membership does not change, so
        // only the prefetcher's second look asks again; nothing here calls across the silos.
        var before = keys.Lookups;
        keys.Forget(first.Silo);
        await Staged.Until(() => keys.Knows(first.Silo), "the second silo asks again for the key it lost");
        Assert.Equal(before + 1, keys.Lookups);
    }

    [Fact]
    public async Task A_stamp_naming_the_other_silo_with_a_made_up_key_is_refused_and_holds_no_lock()
    {
        var (first, second) = await OnEachSilo();
        var callee = _cluster.Client.GetGrain<IBankAccount>(second.Id);
        var forged = new SiloStamp(first.Silo, Guid.NewGuid());

        await Assert.ThrowsAsync<SnapperEntryPointException>(() => _cluster.Client.GetGrain<IActorCallee>(callee.GetGrainId())
            .ExecuteCall(new CallRequest(forged, new TxnContext(1, TxnMode.Act, callee.GetGrainId()), nameof(IBankAccount.Reset), 5m)).AsTask());
        await Assert.ThrowsAsync<SnapperEntryPointException>(() => _cluster.Client.GetGrain<IActParticipant>(callee.GetGrainId()).Abort(forged, 1));

        await callee.StartTxn(callee.Reset, 7m);
        Assert.Equal(7m, await callee.StartTxn(callee.Balance, 0));
    }

    [Fact]
    public async Task A_stamp_naming_a_silo_that_is_not_in_the_cluster_is_refused()
    {
        var (_, second) = await OnEachSilo();
        var callee = _cluster.Client.GetGrain<IBankAccount>(second.Id);
        var real = _cluster.Silos[0].SiloAddress;
        var madeUp = SiloAddress.New(real.Endpoint.Address, real.Endpoint.Port + 1000, real.Generation);

        await Assert.ThrowsAsync<SnapperEntryPointException>(() =>
            _cluster.Client.GetGrain<IActParticipant>(callee.GetGrainId()).Abort(new SiloStamp(madeUp, Guid.NewGuid()), 1));
        await Assert.ThrowsAsync<SnapperEntryPointException>(() =>
            _cluster.Client.GetGrain<IActParticipant>(callee.GetGrainId()).Abort(new SiloStamp(null, Guid.NewGuid()), 1));

        await callee.StartTxn(callee.Reset, 3m);
        Assert.Equal(3m, await callee.StartTxn(callee.Balance, 0));
    }

    /// <summary>Two new accounts, the first activated on one silo and the second on the other.</summary>
    private async Task<((long Id, SiloAddress Silo) First, (long Id, SiloAddress Silo) Second)> OnEachSilo()
    {
        // Orleans places an embedded silo's actors on a random silo: activate new ones until both silos have one.
        var found = new Dictionary<SiloAddress, long>();
        for (var attempt = 0; found.Count < 2; attempt++)
        {
            Assert.True(attempt < 200, "no account was placed on the second silo in 200 tries");
            var id = ClusterFixture.NewId();
            var account = _cluster.Client.GetGrain<IBankAccount>(id);
            await account.StartTxn(account.Reset, 0m);
            found.TryAdd((await account.Cast<IActivationControl>().WhoAmI()).Silo, id);
        }

        var placed = found.Select(p => (p.Value, p.Key)).ToArray();
        return (placed[0], placed[1]);
    }

    private SiloCallKeys Keys(SiloAddress silo) =>
        _cluster.Silos.Single(s => s.SiloAddress.Equals(silo)).ServiceProvider.GetRequiredService<SiloCallKeys>();
}
