using Snapper;
using Snapper.Tests.Actors;

namespace Snapper.Tests.Serializability;

[GenerateSerializer]
public sealed class WriteLog
{
    /// <summary>Ids of the transactions that wrote this actor, in the order they wrote it.</summary>
    [Id(0)] public List<long> Writers { get; set; } = new();
}

/// <summary>
/// One access of a transaction: read or write this actor, then (if <paramref name="Gate"/> is set) report at that
/// gate and wait to be released, run the children, and throw if <paramref name="Fail"/>. Randomized workloads set
/// no gate; staged schedules use it to stop a transaction between its accesses. <paramref name="Target"/> is the
/// history's actor this step accesses (read by <see cref="KeyedHistoryActor"/>, whose keys are the history's actors).
/// </summary>
[GenerateSerializer, Immutable]
public sealed record Step(
    [property: Id(0)] long Txn,
    [property: Id(1)] bool Write,
    [property: Id(2)] Step[] Children,
    [property: Id(3)] long[] ChildActors,
    [property: Id(4)] bool Parallel,
    [property: Id(5)] bool Fail,
    [property: Id(6)] string? Gate = null,
    [property: Id(7)] long Target = -1);

/// <summary>What one access saw: the actor's writer list when the transaction first read it (its own writes excluded).</summary>
[GenerateSerializer, Immutable]
public sealed record Observation(
    [property: Id(0)] long Actor,
    [property: Id(1)] long[] Seen,
    [property: Id(2)] bool Wrote);

public sealed class UserAbortException(string message) : Exception(message);

public interface IHistoryActor : ITransactionalActor, IGrainWithIntegerKey
{
    Task<Observation[]> Execute(TxnContext ctx, Step step);

    Task<long[]> Writers(TxnContext ctx, int unused);
}

/// <summary>
/// Records a history a checker can verify: every write appends the writer's id to the actor's list, and
/// every access returns the list as the transaction saw it. The final lists give the write order per actor,
/// the observations give what each transaction read.
/// </summary>
public sealed class HistoryActor : TransactionalActor<WriteLog>, IHistoryActor
{
    public async Task<Observation[]> Execute(TxnContext ctx, Step step)
    {
        if (ctx.Mode == TxnMode.Act)
        {
            ActTraces.RanAs(step.Txn, ctx.Tid);
        }

        var log = await GetState(ctx, step.Write ? AccessMode.ReadWrite : AccessMode.Read);
        var seen = log.Writers.Where(w => w != step.Txn).ToArray();
        if (step.Write && !log.Writers.Contains(step.Txn))
        {
            log.Writers.Add(step.Txn);
        }

        return await HistorySteps.ContinueAsync(ctx, step, new Observation(this.GetPrimaryKeyLong(), seen, step.Write),
            i => CallActor(ctx, GrainFactory.GetGrain<IHistoryActor>(step.ChildActors[i]).Execute, step.Children[i]));
    }

    public async Task<long[]> Writers(TxnContext ctx, int unused) => [.. (await GetState(ctx, AccessMode.Read)).Writers];
}

/// <summary>What both history actors do after their own access: stop at the step's gate, run the children, fail if asked.</summary>
internal static class HistorySteps
{
    public static async Task<Observation[]> ContinueAsync(TxnContext ctx, Step step, Observation own, Func<int, Task<Observation[]>> callChild)
    {
        var observations = new List<Observation> { own };
        if (step.Gate is { } gate)
        {
            Gates.Reach(gate, ctx.Tid);
            await Gates.WhenReleased(gate);
        }

        if (step.Parallel)
        {
            foreach (var result in await Task.WhenAll(Enumerable.Range(0, step.Children.Length).Select(callChild)))
            {
                observations.AddRange(result);
            }
        }
        else
        {
            for (var i = 0; i < step.Children.Length; i++)
            {
                observations.AddRange(await callChild(i));
            }
        }

        if (step.Fail)
        {
            throw new UserAbortException($"transaction {step.Txn} aborts on purpose");
        }

        return [.. observations];
    }
}

public interface IKeyedHistoryActor : ITransactionalActor, IGrainWithIntegerKey
{
    Task<Observation[]> Execute(TxnContext ctx, Step step);

    Task<long[]> Writers(TxnContext ctx, int key);

    /// <summary>Creates the keys with empty writer lists (a leader key must exist before anything follows it).</summary>
    Task Seed(TxnContext ctx, int[] keys);

    /// <summary>Makes this actor's key a replica of the same key of another history actor (an update dependency).</summary>
    Task Mirror(TxnContext ctx, MirrorOf leader);
}

/// <summary>The key <paramref name="Key"/> of history actor <paramref name="Grain"/>, which a replica follows.</summary>
[GenerateSerializer, Immutable]
public sealed record MirrorOf([property: Id(0)] long Grain, [property: Id(1)] int Key);

/// <summary>
/// The history actor as a key-value actor: each of its keys is one "actor" of the history (the step's
/// <see cref="Step.Target"/>, a virtual id: grain <c>Target / KeysPerActor</c>, key <c>Target % KeysPerActor</c>), holding
/// that key's writer list, so the checker verifies per key what it verifies per actor for opaque state. Grains for
/// targets from <see cref="KeyLevelTargets"/> on schedule PACTs per key.
/// </summary>
public sealed class KeyedHistoryActor : KeyValueActor<int, long[]>, IKeyedHistoryActor
{
    public const int KeysPerActor = 4;

    /// <summary>History actors from this id on are keys of actors with key-level concurrency control (their replicas too).</summary>
    public const long KeyLevelTargets = 1L << 46;

    protected override ConcurrencyLevel Concurrency => this.GetPrimaryKeyLong() >= KeyLevelTargets / KeysPerActor ? ConcurrencyLevel.Key : ConcurrencyLevel.Actor;

    public static (long Grain, int Key) Locate(long target) => (target / KeysPerActor, (int)(target % KeysPerActor));

    public async Task<Observation[]> Execute(TxnContext ctx, Step step)
    {
        if (ctx.Mode == TxnMode.Act)
        {
            ActTraces.RanAs(step.Txn, ctx.Tid);
        }

        var key = Locate(step.Target).Key;
        var state = await GetState(ctx, step.Write ? AccessMode.ReadWrite : AccessMode.Read, key);
        var writers = state.TryGet(key, out var list) ? list : [];
        var seen = writers.Where(w => w != step.Txn).ToArray();
        if (step.Write && !writers.Contains(step.Txn))
        {
            state.Put(key, [.. writers, step.Txn]);
        }

        return await HistorySteps.ContinueAsync(ctx, step, new Observation(step.Target, seen, step.Write),
            i => CallActor(ctx, GrainFactory.GetGrain<IKeyedHistoryActor>(Locate(step.ChildActors[i]).Grain).Execute, step.Children[i]));
    }

    public async Task<long[]> Writers(TxnContext ctx, int key) =>
        (await GetState(ctx, AccessMode.Read, key)).TryGet(key, out var list) ? list : [];

    public async Task Seed(TxnContext ctx, int[] keys)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite, keys);
        foreach (var key in keys.Where(k => !state.ContainsKey(k)))
        {
            state.Put(key, []);
        }
    }

    public Task Mirror(TxnContext ctx, MirrorOf leader) =>
        RegisterUpdateDependency(ctx, GrainFactory.GetGrain<IKeyedHistoryActor>(leader.Grain), leader.Key, leader.Key, new Snapper.KeyValue.Replicate<int, int, long[]>());
}
