using System.Collections.Concurrent;
using Snapper;

namespace Snapper.Tests.Actors;

/// <summary>
/// Rendezvous points between a test and grain code running in the in-process silo: a grain reports that it
/// reached a point (with its tid) and waits until the test lets it go on.
/// </summary>
public static class Gates
{
    private static readonly ConcurrentDictionary<string, TaskCompletionSource<long>> Reached = new();
    private static readonly ConcurrentDictionary<string, TaskCompletionSource> Released = new();

    public static void Reach(string gate, long tid) => ReachedSource(gate).TrySetResult(tid);

    public static Task<long> WhenReached(string gate) => ReachedSource(gate).Task.WaitAsync(TimeSpan.FromSeconds(30));

    public static Task WhenReleased(string gate) => ReleasedSource(gate).Task;

    public static void Release(string gate) => ReleasedSource(gate).TrySetResult();

    private static TaskCompletionSource<long> ReachedSource(string gate) =>
        Reached.GetOrAdd(gate, _ => new TaskCompletionSource<long>(TaskCreationOptions.RunContinuationsAsynchronously));

    private static TaskCompletionSource ReleasedSource(string gate) =>
        Released.GetOrAdd(gate, _ => new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously));
}

[GenerateSerializer]
public sealed class ProbeState
{
    [Id(0)] public int Value { get; set; }
}

/// <summary>
/// Take the lock in <paramref name="Mode"/>, report at <paramref name="Gate"/>, wait to be released, then optionally
/// touch <paramref name="ThenTouch"/>, and then optionally report at <paramref name="ThenGate"/> and wait again.
/// </summary>
[GenerateSerializer]
public sealed record Hold(
    [property: Id(0)] string Gate,
    [property: Id(1)] AccessMode Mode,
    [property: Id(2)] long? ThenTouch = null,
    [property: Id(3)] string? ThenGate = null);

/// <summary>Start a call to <paramref name="Target"/>'s <c>Hold</c> at <paramref name="Gate"/> and return without awaiting it.</summary>
[GenerateSerializer]
public sealed record UnawaitedHold([property: Id(0)] long Target, [property: Id(1)] string Gate);

/// <summary>
/// Increment <paramref name="Other"/>, then report at <paramref name="Gate"/>, wait to be released, throw if
/// <paramref name="ThenFail"/>, and increment <paramref name="Other"/> again if <paramref name="ThenCallAgain"/>.
/// </summary>
[GenerateSerializer]
public sealed record CallThenHold([property: Id(0)] long Other, [property: Id(1)] string Gate, [property: Id(2)] bool ThenFail = false, [property: Id(3)] bool ThenCallAgain = false);

/// <summary>
/// Report at <paramref name="Gate"/>, wait to be released, then read <paramref name="Target"/>. As a PACT's first call,
/// reaching the gate proves the PACT's batch was emitted: every sub-batch, the one on the target included, is delivered
/// before any PACT of the batch runs.
/// </summary>
[GenerateSerializer]
public sealed record ReachThenRead([property: Id(0)] string Gate, [property: Id(1)] long Target);

/// <summary>Read <paramref name="Target"/>, then report at <paramref name="Gate"/>, wait to be released, and return what was read.</summary>
[GenerateSerializer]
public sealed record ReadThenHold([property: Id(0)] long Target, [property: Id(1)] string Gate);

/// <summary>
/// Report at <paramref name="Gate"/>, wait to be released, then write <paramref name="Target"/> through two calls in
/// parallel: two requests of one transaction for the same lock.
/// </summary>
[GenerateSerializer]
public sealed record ReachThenTouchTwice([property: Id(0)] string Gate, [property: Id(1)] long Target);

/// <summary>
/// Call <paramref name="Target"/>'s <c>Hold</c> at <paramref name="Gate"/> (writing it) and await it: the callee holds inside
/// the call. With <paramref name="BackVia"/>, the target then calls that actor, which calls the target back.
/// </summary>
[GenerateSerializer]
public sealed record CallHold([property: Id(0)] long Target, [property: Id(1)] string Gate, [property: Id(2)] long? BackVia = null);

/// <summary>Write, report at <paramref name="Gate"/>, wait to be released, then have <paramref name="Via"/> touch this actor.</summary>
[GenerateSerializer]
public sealed record HoldThenTouchBack([property: Id(0)] string Gate, [property: Id(1)] long Via);

public interface IProbe : ITransactionalActor, IGrainWithIntegerKey
{
    Task<long> CallHold(TxnContext ctx, CallHold input);

    Task HoldThenTouchBack(TxnContext ctx, HoldThenTouchBack input);

    Task ReachThenTouchTwice(TxnContext ctx, ReachThenTouchTwice input);

    Task CallThenHold(TxnContext ctx, CallThenHold input);

    /// <summary>Calls <c>ReachThenWrite</c> on <paramref name="target"/> (whose gate is named after <paramref name="target"/>'s id).</summary>
    Task CallReachThenWrite(TxnContext ctx, long target);

    /// <summary>Reports the PACT's global batch (0 if local) at a gate named after this actor, waits to be released, then writes.</summary>
    Task ReachThenWrite(TxnContext ctx, int unused);

    Task<int> ReachThenRead(TxnContext ctx, ReachThenRead input);

    Task<int> ReadThenHold(TxnContext ctx, ReadThenHold input);

    Task<long> Hold(TxnContext ctx, Hold input);

    Task<long> Touch(TxnContext ctx, AccessMode mode);

    Task<int> Read(TxnContext ctx, int unused);

    Task Increment(TxnContext ctx, int by);

    Task Keep(TxnContext ctx, int unused);

    Task UseKept(TxnContext ctx, int unused);

    Task CallWithoutAwait(TxnContext ctx, long target);

    Task CallWithoutAwaitToHold(TxnContext ctx, UnawaitedHold input);

    /// <summary>
    /// Starts a call without awaiting it, blocks its turn until gate <c>answered-{this actor}</c> is reached (a test
    /// hook reaches it when the call's answer arrived), then returns: the callee finished before this method returned.
    /// </summary>
    Task CallWithoutAwaitUntilAnswered(TxnContext ctx, long target);

    Task IncrementThenFail(TxnContext ctx, long other);

    Task CatchFailedCall(TxnContext ctx, long other);

    Task IncrementThenThrowUnserializable(TxnContext ctx, long other);

    Task TouchEach(TxnContext ctx, long[] others);

    /// <summary>Increments itself and each of <paramref name="others"/>, the calls in parallel (<c>Task.WhenAll</c>).</summary>
    Task IncrementAll(TxnContext ctx, long[] others);

    /// <summary>Returns null instead of a task (a non-async method with a bug).</summary>
    Task ReturnNoTask(TxnContext ctx, int unused);

    /// <summary>Increments itself, then calls <see cref="ReturnNoTask"/> on <paramref name="other"/>.</summary>
    Task IncrementThenCallNoTask(TxnContext ctx, long other);
}

/// <summary>A plain Orleans interface of the probe, outside every transaction.</summary>
public interface IProbeInspection : IGrainWithIntegerKey
{
    /// <summary>The probe's committed value as its activation holds it now (what a deactivation would persist).</summary>
    Task<int> CommittedValue();
}

/// <summary>A user exception with no Orleans serializer: it cannot travel to the client as an object.</summary>
public sealed class LocalOnlyException(string message) : Exception(message);

public sealed class Probe : ControllableActor<ProbeState>, IProbe, IProbeInspection
{
    public Task<int> CommittedValue() => Task.FromResult(CommittedState.Value);

    private TxnContext? _kept;

    public async Task<long> Hold(TxnContext ctx, Hold input)
    {
        var state = await GetState(ctx, input.Mode);
        if (input.Mode == AccessMode.ReadWrite)
        {
            state.Value++;
        }

        Gates.Reach(input.Gate, ctx.Tid);
        await Gates.WhenReleased(input.Gate);
        if (input.ThenTouch is { } other)
        {
            await CallActor(ctx, GrainFactory.GetGrain<IProbe>(other).Touch, AccessMode.ReadWrite);
        }

        if (input.ThenGate is { } thenGate)
        {
            Gates.Reach(thenGate, ctx.Tid);
            await Gates.WhenReleased(thenGate);
        }

        return ctx.Tid;
    }

    public async Task<long> CallHold(TxnContext ctx, CallHold input)
    {
        var target = GrainFactory.GetGrain<IProbe>(input.Target);
        if (input.BackVia is { } via)
        {
            await CallActor(ctx, target.HoldThenTouchBack, new HoldThenTouchBack(input.Gate, via));
            return ctx.Tid;
        }

        return await CallActor(ctx, target.Hold, new Hold(input.Gate, AccessMode.ReadWrite));
    }

    public async Task HoldThenTouchBack(TxnContext ctx, HoldThenTouchBack input)
    {
        (await GetState(ctx, AccessMode.ReadWrite)).Value++;
        Gates.Reach(input.Gate, ctx.Tid);
        await Gates.WhenReleased(input.Gate);
        await CallActor(ctx, GrainFactory.GetGrain<IProbe>(input.Via).TouchEach, new[] { this.GetPrimaryKeyLong() });
    }

    public async Task CallThenHold(TxnContext ctx, CallThenHold input)
    {
        (await GetState(ctx, AccessMode.ReadWrite)).Value++;
        await CallActor(ctx, GrainFactory.GetGrain<IProbe>(input.Other).Increment, 1);
        Gates.Reach(input.Gate, ctx.Tid);
        await Gates.WhenReleased(input.Gate);
        if (input.ThenFail)
        {
            throw new InvalidOperationException("failing after the hold, as asked");
        }

        if (input.ThenCallAgain)
        {
            await CallActor(ctx, GrainFactory.GetGrain<IProbe>(input.Other).Increment, 1);
        }
    }

    public Task CallReachThenWrite(TxnContext ctx, long target) =>
        CallActor(ctx, GrainFactory.GetGrain<IProbe>(target).ReachThenWrite, 0);

    public async Task ReachThenWrite(TxnContext ctx, int unused)
    {
        var gate = $"reach-then-write-{this.GetPrimaryKeyLong()}";
        Gates.Reach(gate, ctx.GlobalBid);
        await Gates.WhenReleased(gate);
        (await GetState(ctx, AccessMode.ReadWrite)).Value++;
    }

    public async Task<int> ReachThenRead(TxnContext ctx, ReachThenRead input)
    {
        Gates.Reach(input.Gate, ctx.Tid);
        await Gates.WhenReleased(input.Gate);
        return await CallActor(ctx, GrainFactory.GetGrain<IProbe>(input.Target).Read, 0);
    }

    public async Task<int> ReadThenHold(TxnContext ctx, ReadThenHold input)
    {
        var read = await CallActor(ctx, GrainFactory.GetGrain<IProbe>(input.Target).Read, 0);
        Gates.Reach(input.Gate, ctx.Tid);
        await Gates.WhenReleased(input.Gate);
        return read;
    }

    public async Task ReachThenTouchTwice(TxnContext ctx, ReachThenTouchTwice input)
    {
        Gates.Reach(input.Gate, ctx.Tid);
        await Gates.WhenReleased(input.Gate);
        var target = GrainFactory.GetGrain<IProbe>(input.Target);
        await Task.WhenAll(
            CallActor(ctx, target.Touch, AccessMode.ReadWrite),
            CallActor(ctx, target.Touch, AccessMode.ReadWrite));
    }

    public async Task<long> Touch(TxnContext ctx, AccessMode mode)
    {
        var state = await GetState(ctx, mode);
        if (mode == AccessMode.ReadWrite)
        {
            state.Value++;
        }

        return ctx.Tid;
    }

    public async Task<int> Read(TxnContext ctx, int unused) => (await GetState(ctx, AccessMode.Read)).Value;

    /// <summary>Increments each of <paramref name="others"/> in turn (a PACT's part on one ends before it calls the next).</summary>
    public async Task TouchEach(TxnContext ctx, long[] others)
    {
        foreach (var other in others)
        {
            await CallActor(ctx, GrainFactory.GetGrain<IProbe>(other).Touch, AccessMode.ReadWrite);
        }
    }

    public async Task IncrementAll(TxnContext ctx, long[] others)
    {
        (await GetState(ctx, AccessMode.ReadWrite)).Value += 1;
        await Task.WhenAll(others.Select(other => CallActor(ctx, GrainFactory.GetGrain<IProbe>(other).Increment, 1)));
    }

    public async Task Increment(TxnContext ctx, int by) => (await GetState(ctx, AccessMode.ReadWrite)).Value += by;

    public async Task Keep(TxnContext ctx, int unused)
    {
        await GetState(ctx, AccessMode.Read);
        _kept = ctx;
    }

    public async Task UseKept(TxnContext ctx, int unused)
    {
        await GetState(ctx, AccessMode.Read);
        (await GetState(_kept!, AccessMode.ReadWrite)).Value += 100;
    }

    public async Task CallWithoutAwait(TxnContext ctx, long target)
    {
        (await GetState(ctx, AccessMode.ReadWrite)).Value += 1;
        _ = CallActor(ctx, GrainFactory.GetGrain<IProbe>(target).Increment, 1);
    }

    public async Task CallWithoutAwaitUntilAnswered(TxnContext ctx, long target)
    {
        (await GetState(ctx, AccessMode.ReadWrite)).Value += 1;
        _ = CallActor(ctx, GrainFactory.GetGrain<IProbe>(target).Increment, 1);

        // Blocking the turn is the point: nothing of this activation runs until the answer is in.
        Gates.WhenReached($"answered-{this.GetGrainId()}").Wait();
    }

    public async Task CallWithoutAwaitToHold(TxnContext ctx, UnawaitedHold input)
    {
        (await GetState(ctx, AccessMode.ReadWrite)).Value += 1;
        _ = CallActor(ctx, GrainFactory.GetGrain<IProbe>(input.Target).Hold, new Hold(input.Gate, AccessMode.ReadWrite));
    }

    public async Task IncrementThenFail(TxnContext ctx, long other)
    {
        (await GetState(ctx, AccessMode.ReadWrite)).Value += 1;
        await CallActor(ctx, GrainFactory.GetGrain<IProbe>(other).Increment, 1);
        throw new InvalidOperationException("user code gave up");
    }

    public async Task CatchFailedCall(TxnContext ctx, long other)
    {
        (await GetState(ctx, AccessMode.ReadWrite)).Value += 1;
        try
        {
            await CallActor(ctx, GrainFactory.GetGrain<IProbe>(other).IncrementThenFail, other + 1);
        }
        catch (TransactionAbortedException)
        {
            // Swallowing a failed call must not let the transaction commit.
        }
    }

    public Task ReturnNoTask(TxnContext ctx, int unused) => null!;

    public async Task IncrementThenCallNoTask(TxnContext ctx, long other)
    {
        (await GetState(ctx, AccessMode.ReadWrite)).Value += 1;
        await CallActor(ctx, GrainFactory.GetGrain<IProbe>(other).ReturnNoTask, 0);
    }

    public async Task IncrementThenThrowUnserializable(TxnContext ctx, long other)
    {
        (await GetState(ctx, AccessMode.ReadWrite)).Value += 1;
        await CallActor(ctx, GrainFactory.GetGrain<IProbe>(other).Increment, 1);
        throw new LocalOnlyException("no codec for me");
    }
}
