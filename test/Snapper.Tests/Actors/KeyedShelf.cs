namespace Snapper.Tests.Actors;

/// <summary>Put <paramref name="Count"/> of <paramref name="Item"/>, then, with a gate, report at it and wait to be released (then fail if asked).</summary>
[GenerateSerializer]
public sealed record ShelfWrite([property: Id(0)] string Item, [property: Id(1)] int Count, [property: Id(2)] string? Gate = null, [property: Id(3)] bool ThenFail = false);

/// <summary>Call <paramref name="Target"/>'s <c>Write</c> with each of <paramref name="Writes"/>, all at once.</summary>
[GenerateSerializer]
public sealed record ParallelWrites([property: Id(0)] long Target, [property: Id(1)] ShelfWrite[] Writes);

/// <summary>A key-value actor made for key-level concurrency control: item name to count.</summary>
public interface IKeyedShelf : ITransactionalActor, IGrainWithIntegerKey
{
    Task Write(TxnContext ctx, ShelfWrite write);

    Task<int?> Count(TxnContext ctx, string item);

    Task<Dictionary<string, int>> All(TxnContext ctx, int unused);

    /// <summary>Adds one to each item, one <c>GetState</c> per item.</summary>
    Task WriteEach(TxnContext ctx, string[] items);

    Task WriteInParallel(TxnContext ctx, ParallelWrites writes);

    /// <summary>Does <paramref name="write"/>, then returns the whole collection as this transaction sees it.</summary>
    Task<Dictionary<string, int>> WriteThenCount(TxnContext ctx, ShelfWrite write);

    Task<bool> Delete(TxnContext ctx, string item);
}

public sealed class KeyedShelf() : KeyValueActor<string, int>(ConcurrencyLevel.Key), IKeyedShelf
{
    public async Task Write(TxnContext ctx, ShelfWrite write)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite, write.Item);
        state.Put(write.Item, (state.TryGet(write.Item, out var had) ? had : 0) + write.Count);
        if (write.Gate is { } gate)
        {
            Gates.Reach(gate, ctx.Tid);
            await Gates.WhenReleased(gate);
        }

        if (write.ThenFail)
        {
            throw new InvalidOperationException("failing after the write, as asked");
        }
    }

    public async Task<int?> Count(TxnContext ctx, string item) =>
        (await GetState(ctx, AccessMode.Read, item)).TryGet(item, out var count) ? count : null;

    public async Task<Dictionary<string, int>> All(TxnContext ctx, int unused) =>
        new((await GetState(ctx, AccessMode.Read)).Entries);

    public async Task WriteEach(TxnContext ctx, string[] items)
    {
        foreach (var item in items)
        {
            var state = await GetState(ctx, AccessMode.ReadWrite, item);
            state.Put(item, (state.TryGet(item, out var had) ? had : 0) + 1);
        }
    }

    public Task WriteInParallel(TxnContext ctx, ParallelWrites writes)
    {
        var target = GrainFactory.GetGrain<IKeyedShelf>(writes.Target);
        return Task.WhenAll(writes.Writes.Select(write => CallActor(ctx, target.Write, write)));
    }

    public async Task<bool> Delete(TxnContext ctx, string item) => (await GetState(ctx, AccessMode.ReadWrite, item)).Delete(item);

    public async Task<Dictionary<string, int>> WriteThenCount(TxnContext ctx, ShelfWrite write)
    {
        await Write(ctx, write);
        return await All(ctx, 0);
    }
}
