using Snapper.Act;
using Snapper.Actors;
using Snapper.Tests.Actors;
using Xunit;

namespace Snapper.Tests;

/// <summary>
/// Snapper's internal entry points (a call inside a transaction, 2PC) refuse callers from outside the silo: a client
/// with a made-up context can neither join a transaction nor take a lock, and the actor stays free.
/// </summary>
[Collection(ClusterCollection.Name)]
public sealed class EntryPointTests(ClusterFixture fixture)
{
    private IGrainFactory Grains => fixture.Client;

    [Fact]
    public async Task A_client_calling_execute_with_a_made_up_context_is_refused_and_holds_no_lock()
    {
        var id = ClusterFixture.NewId();
        var probe = Grains.GetGrain<IProbe>(id);
        var forged = new TxnContext(1, TxnMode.Act, probe.GetGrainId());

        var refused = await Assert.ThrowsAsync<SnapperEntryPointException>(() =>
            Grains.GetGrain<IActorCallee>(probe.GetGrainId()).ExecuteCall(new CallRequest(forged, nameof(IProbe.Increment), 5)).AsTask());
        Assert.Equal(nameof(IActorCallee.ExecuteCall), refused.Method);

        // Nothing was locked or changed: an ACT and a PACT on the actor commit at once.
        await probe.StartTxn(probe.Increment, 1);
        await probe.StartTxn(probe.Increment, 1, ActorAccessInfo.Of(probe));
        Assert.Equal(2, await probe.StartTxn(probe.Read, 0));
    }

    [Fact]
    public async Task A_client_calling_two_phase_commit_is_refused()
    {
        var participant = Grains.GetGrain<IActParticipant>(Grains.GetGrain<IProbe>(ClusterFixture.NewId()).GetGrainId());

        await Assert.ThrowsAsync<SnapperEntryPointException>(() => participant.Prepare(1, default, false));
        await Assert.ThrowsAsync<SnapperEntryPointException>(() => participant.Commit(1, default));
        await Assert.ThrowsAsync<SnapperEntryPointException>(() => participant.Abort(1));
        await Assert.ThrowsAsync<SnapperEntryPointException>(() => participant.Resolve(1, participant.GetGrainId()));
    }
}
