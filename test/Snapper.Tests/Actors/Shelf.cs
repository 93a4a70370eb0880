using Snapper.KeyValue;

namespace Snapper.Tests.Actors;

/// <summary>Move <paramref name="Count"/> of item <paramref name="Item"/> from this shelf to shelf <paramref name="To"/>.</summary>
[GenerateSerializer]
public sealed record Move([property: Id(0)] string Item, [property: Id(1)] int Count, [property: Id(2)] long To);

/// <summary>A key-value actor: item name to count.</summary>
public interface IShelf : ITransactionalActor, IGrainWithIntegerKey
{
    Task Stock(TxnContext ctx, Dictionary<string, int> items);

    Task<int?> Count(TxnContext ctx, string item);

    Task<Dictionary<string, int>> All(TxnContext ctx, int unused);

    Task<bool> Remove(TxnContext ctx, string item);

    Task Take(TxnContext ctx, Move move);

    Task Add(TxnContext ctx, Move move);

    /// <summary>Acquires item a for reading, then b for writing, and reports whether both calls gave one object that still reads a.</summary>
    Task<bool> ExtendAccess(TxnContext ctx, string[] items);

    Task ReadWithoutAcquiring(TxnContext ctx, string item);

    Task WriteAfterAcquiringForReading(TxnContext ctx, string item);

    Task EnumerateWithoutTheCollection(TxnContext ctx, string item);

    Task StockThenFail(TxnContext ctx, string item);
}

public sealed class Shelf : KeyValueActor<string, int>, IShelf
{
    public async Task Stock(TxnContext ctx, Dictionary<string, int> items)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite, [.. items.Keys]);
        foreach (var (item, count) in items)
        {
            state.Put(item, count);
        }
    }

    public async Task<int?> Count(TxnContext ctx, string item) =>
        (await GetState(ctx, AccessMode.Read, item)).TryGet(item, out var count) ? count : null;

    public async Task<Dictionary<string, int>> All(TxnContext ctx, int unused) =>
        new((await GetState(ctx, AccessMode.Read)).Entries);

    public async Task<bool> Remove(TxnContext ctx, string item) => (await GetState(ctx, AccessMode.ReadWrite, item)).Delete(item);

    public async Task Take(TxnContext ctx, Move move)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite, move.Item);
        var left = state.Get(move.Item) - move.Count;
        if (left < 0)
        {
            throw new InvalidOperationException($"only {left + move.Count} of {move.Item} on the shelf");
        }

        if (left == 0)
        {
            state.Delete(move.Item);
        }
        else
        {
            state.Put(move.Item, left);
        }

        await CallActor(ctx, GrainFactory.GetGrain<IShelf>(move.To).Add, move);
    }

    public async Task Add(TxnContext ctx, Move move)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite, move.Item);
        state.Put(move.Item, (state.TryGet(move.Item, out var had) ? had : 0) + move.Count);
    }

    public async Task<bool> ExtendAccess(TxnContext ctx, string[] items)
    {
        var first = await GetState(ctx, AccessMode.Read, items[0]);
        var second = await GetState(ctx, AccessMode.ReadWrite, items[1]);
        second.Put(items[1], first.TryGet(items[0], out var a) ? a : -1);
        return ReferenceEquals(first, second) && second.ContainsKey(items[0]) && second.Acquired.Count == 2;
    }

    public async Task ReadWithoutAcquiring(TxnContext ctx, string item)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite, "something else");
        state.Put("something else", 1);
        state.TryGet(item, out _);
    }

    public async Task WriteAfterAcquiringForReading(TxnContext ctx, string item) =>
        (await GetState(ctx, AccessMode.Read, item)).Put(item, 99);

    public async Task EnumerateWithoutTheCollection(TxnContext ctx, string item) =>
        _ = (await GetState(ctx, AccessMode.Read, item)).Entries.Count;

    public async Task StockThenFail(TxnContext ctx, string item)
    {
        (await GetState(ctx, AccessMode.ReadWrite, item)).Put(item, 1);
        throw new InvalidOperationException("failing after the write, as asked");
    }
}
