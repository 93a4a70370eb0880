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
/// no gate; staged schedules use it to stop a transaction between its accesses.
/// </summary>
[GenerateSerializer, Immutable]
public sealed record Step(
    [property: Id(0)] long Txn,
    [property: Id(1)] bool Write,
    [property: Id(2)] Step[] Children,
    [property: Id(3)] long[] ChildActors,
    [property: Id(4)] bool Parallel,
    [property: Id(5)] bool Fail,
    [property: Id(6)] string? Gate = null);

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
        var log = await GetState(ctx, step.Write ? AccessMode.ReadWrite : AccessMode.Read);
        var seen = log.Writers.Where(w => w != step.Txn).ToArray();
        if (step.Write && !log.Writers.Contains(step.Txn))
        {
            log.Writers.Add(step.Txn);
        }

        var observations = new List<Observation> { new(this.GetPrimaryKeyLong(), seen, step.Write) };
        if (step.Gate is { } gate)
        {
            Gates.Reach(gate, ctx.Tid);
            await Gates.WhenReleased(gate);
        }

        var calls = step.Children.Select((child, i) => (Child: child, Actor: GrainFactory.GetGrain<IHistoryActor>(step.ChildActors[i])));
        if (step.Parallel)
        {
            foreach (var result in await Task.WhenAll(calls.Select(c => CallActor(ctx, c.Actor.Execute, c.Child))))
            {
                observations.AddRange(result);
            }
        }
        else
        {
            foreach (var (child, actor) in calls)
            {
                observations.AddRange(await CallActor(ctx, actor.Execute, child));
            }
        }

        if (step.Fail)
        {
            throw new UserAbortException($"transaction {step.Txn} aborts on purpose");
        }

        return [.. observations];
    }

    public async Task<long[]> Writers(TxnContext ctx, int unused) => [.. (await GetState(ctx, AccessMode.Read)).Writers];
}
