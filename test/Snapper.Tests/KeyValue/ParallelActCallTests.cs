using Snapper.Hosting;
using Snapper.Tests.Actors;
using Xunit;

namespace Snapper.Tests.KeyValue;

/// <summary>
/// Write <paramref name="Key"/> (one more), first waiting at <paramref name="Before"/> if set (before the key is asked for),
/// then reporting at <paramref name="After"/> if set and waiting to be released.
/// </summary>
[GenerateSerializer]
public sealed record StagedWrite([property: Id(0)] string Key, [property: Id(1)] string? Before = null, [property: Id(2)] string? After = null);

/// <summary>Call <paramref name="Target"/>'s <c>Write</c> with each of <paramref name="Writes"/>, all at once.</summary>
[GenerateSerializer]
public sealed record StagedParallel([property: Id(0)] long Target, [property: Id(1)] StagedWrite[] Writes);

/// <summary>Report at <paramref name="Gate"/>, wait to be released, then call <paramref name="Target"/>'s <c>Write</c> with <paramref name="Write"/>.</summary>
[GenerateSerializer]
public sealed record StagedRelay([property: Id(0)] string Gate, [property: Id(1)] long Target, [property: Id(2)] StagedWrite Write);

public interface IStagedKeys : ITransactionalActor, IGrainWithIntegerKey
{
    Task Write(TxnContext ctx, StagedWrite write);

    Task Parallel(TxnContext ctx, StagedParallel writes);

    Task Relay(TxnContext ctx, StagedRelay relay);

    Task<int> Count(TxnContext ctx, string key);
}

/// <summary>A key-level key-value actor whose writes can be stopped before and after they use their key.</summary>
public sealed class StagedKeys() : KeyValueActor<string, int>(ConcurrencyLevel.Key), IStagedKeys
{
    public async Task Write(TxnContext ctx, StagedWrite write)
    {
        if (write.Before is { } before)
        {
            Gates.Reach(before, ctx.Tid);
            await Gates.WhenReleased(before);
        }

        var state = await GetState(ctx, AccessMode.ReadWrite, write.Key);
        state.Put(write.Key, (state.TryGet(write.Key, out var had) ? had : 0) + 1);
        if (write.After is { } after)
        {
            Gates.Reach(after, ctx.Tid);
            await Gates.WhenReleased(after);
        }
    }

    public Task Parallel(TxnContext ctx, StagedParallel writes)
    {
        var target = GrainFactory.GetGrain<IStagedKeys>(writes.Target);
        return Task.WhenAll(writes.Writes.Select(write => CallActor(ctx, target.Write, write)));
    }

    public async Task Relay(TxnContext ctx, StagedRelay relay)
    {
        Gates.Reach(relay.Gate, ctx.Tid);
        await Gates.WhenReleased(relay.Gate);
        await CallActor(ctx, GrainFactory.GetGrain<IStagedKeys>(relay.Target).Write, relay.Write);
    }

    public async Task<int> Count(TxnContext ctx, string key) =>
        (await GetState(ctx, AccessMode.Read, key)).TryGet(key, out var count) ? count : 0;
}

/// <summary>A silo whose test hooks a test sets (ACT admission), and whose bounds outlast every staged wait.</summary>
public sealed class StagedAdmissionClusterFixture : ClusterFixture
{
    protected override void Configure(SnapperOptions options)
    {
        options.HybridWaitTimeout = TimeSpan.FromSeconds(30);
        options.ExecutionTimeout = TimeSpan.FromSeconds(60);
        options.ParticipantTimeout = TimeSpan.FromSeconds(90);
        options.OutcomeRetention = TimeSpan.FromMinutes(5);
    }

    internal override SnapperTestHooks Hooks { get; } = new();
}

/// <summary>
/// Parallel calls of one ACT on one key-level actor (the randomized checker's parallel steps on keys of one actor) and
/// PACT batches: the ACT has one place in the actor's schedule, whichever call took it.
/// </summary>
public sealed class ParallelActCallTests(StagedAdmissionClusterFixture fixture) : IClassFixture<StagedAdmissionClusterFixture>
{
    private IStagedKeys Actor(long id) => fixture.Client.GetGrain<IStagedKeys>(id);

    /// <summary>
    /// The interleaving that lost a committed PACT write: the ACT's first call on the actor is let in (no batch before it)
    /// and, before it goes on, a PACT batch on key k is delivered there (placed after the ACT) and the ACT's second call
    /// asks to enter. Had the second call taken a new place after that batch, the batch would have started while the
    /// first call took key k from the state without the PACT's write; the ACT, committing after the batch, would have
    /// installed its k over the PACT's. The hooks hold the first call between being let in and using the state, and
    /// tell when the second call has taken (or joined) its place; nothing depends on timing.
    /// </summary>
    [Fact]
    public async Task A_batch_delivered_between_two_parallel_calls_of_an_act_runs_after_the_act_and_no_write_is_lost()
    {
        var (root, keys, relay) = (Actor(ClusterFixture.NewId()), Actor(ClusterFixture.NewId()), Actor(ClusterFixture.NewId()));
        var keysId = keys.GetGrainId();
        await keys.StartTxn(keys.Write, new StagedWrite("k")); // k = 1, by an ACT: no batch on the actor yet

        var tag = Guid.NewGuid();
        var (secondCall, firstWrote, relayGate) = ($"second-call-{tag}", $"first-wrote-{tag}", $"relay-{tag}");
        var firstLetIn = new TaskCompletionSource<long>(TaskCreationOptions.RunContinuationsAsynchronously);
        var holdFirst = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var secondPlaced = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var placed = 0;
        fixture.Hooks.ActAdmitted = (actor, tid) => actor == keysId && firstLetIn.TrySetResult(tid) ? holdFirst.Task : null;
        fixture.Hooks.ActPlaced = (actor, tid) =>
        {
            if (actor == keysId && firstLetIn.Task.IsCompleted && tid == firstLetIn.Task.Result && Interlocked.Increment(ref placed) == 1)
            {
                secondPlaced.TrySetResult(); // the first call's placing came before firstLetIn was set: this is the second's
            }
        };

        try
        {
            // The ACT: one call writes k at once (held by the hook once let in), the other waits before it asks for key y.
            var act = root.StartTxn(root.Parallel, new StagedParallel(keys.GetPrimaryKeyLong(),
                [new StagedWrite("k", After: firstWrote), new StagedWrite("y", Before: secondCall)]));
            var actTid = await firstLetIn.Task.WaitAsync(TimeSpan.FromSeconds(10));
            Assert.Equal(actTid, await Gates.WhenReached(secondCall));

            // A PACT writing k: its first actor reaching the gate proves its batch was delivered to the keys' actor,
            // where it is placed after the ACT.
            var pact = relay.StartTxn(relay.Relay, new StagedRelay(relayGate, keys.GetPrimaryKeyLong(), new StagedWrite("k")),
                new ActorAccessInfo().Add(relay).AddKeys(keys, "k"));
            await Gates.WhenReached(relayGate);

            // The ACT's second call asks to enter now, while the first is in and has not used the state yet.
            Gates.Release(secondCall);
            await secondPlaced.Task.WaitAsync(TimeSpan.FromSeconds(10));

            // Another batch for the actor moves its schedule on (it must not start the PACT's batch: the ACT is before it).
            var other = keys.StartTxn(keys.Write, new StagedWrite("z"), new ActorAccessInfo().AddKeys(keys, "z"));

            // The first call takes k and writes it; then the PACT writes k.
            holdFirst.SetResult();
            await Gates.WhenReached(firstWrote);
            Gates.Release(firstWrote);
            Gates.Release(relayGate);

            await Task.WhenAll(act, pact, other).WaitAsync(TimeSpan.FromSeconds(30));
            Assert.Equal(3, await keys.StartTxn(keys.Count, "k")); // 1, the ACT's write and the PACT's
            Assert.Equal(1, await keys.StartTxn(keys.Count, "y"));
        }
        finally
        {
            fixture.Hooks.ActAdmitted = null;
            fixture.Hooks.ActPlaced = null;
            holdFirst.TrySetResult();
            Gates.Release(secondCall);
            Gates.Release(firstWrote);
            Gates.Release(relayGate);
        }
    }
}
