using Snapper;

namespace Snapper.Workloads.Tpcc;

/// <summary>TPC-C on Snapper ACTs: one actor per table partition (Fig. 3.21a), NewOrder entered at the district.</summary>
public interface ISnapperTpccActor : ITransactionalActor, IGrainWithIntegerKey
{
    Task Load(TxnContext ctx, TpccLoad load);

    /// <summary>Runs a NewOrder at this district; returns the order's total in cents.</summary>
    Task<long> NewOrder(TxnContext ctx, NewOrderInput input);

    Task<int> WarehouseTax(TxnContext ctx, int unused);

    Task<int> CustomerDiscount(TxnContext ctx, int customer);

    Task<long[]> ItemPrices(TxnContext ctx, int[] itemIds);

    Task UpdateStock(TxnContext ctx, StockUpdate update);

    Task InsertOrder(TxnContext ctx, OrderRecord order);

    Task<TpccSummary> Summarize(TxnContext ctx, int unused);

    /// <summary>Summaries of many actors read in one transaction, for the consistency check.</summary>
    Task<TpccSummary[]> SummarizeMany(TxnContext ctx, long[] keys);
}

public sealed class SnapperTpccActor : TransactionalActor<TpccPartition>, ISnapperTpccActor
{
    public async Task Load(TxnContext ctx, TpccLoad load)
    {
        (await GetState(ctx, AccessMode.ReadWrite)).LoadFrom(TpccPartition.Create(load));
    }

    public async Task<long> NewOrder(TxnContext ctx, NewOrderInput input)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite);
        var district = state.District ?? throw new InvalidOperationException("NewOrder must enter at a district actor.");
        var (w, d, scale) = (state.WarehouseId, state.DistrictId, district.Scale);

        var warehouseTax = CallActor(ctx, Actor(TpccKeys.Warehouse(w)).WarehouseTax, 0);
        var discount = CallActor(ctx, Actor(TpccKeys.Customer(w, d)).CustomerDiscount, input.Customer);
        var prices = CallActor(ctx, Actor(TpccKeys.Item(w)).ItemPrices, NewOrderLogic.ItemIds(input));
        await Task.WhenAll(warehouseTax, discount, prices);

        var orderId = district.NextOrderId++;
        var (order, total) = NewOrderLogic.Order(orderId, w, input, prices.Result, warehouseTax.Result, district.Tax, discount.Result);
        var writes = NewOrderLogic.StockUpdates(scale, w, input)
            .Select(s => CallActor(ctx, Actor(s.StockKey).UpdateStock, s.Update))
            .Append(CallActor(ctx, Actor(NewOrderLogic.OrderKey(scale, w, d, orderId)).InsertOrder, order));
        await Task.WhenAll(writes);
        return total;
    }

    public async Task<int> WarehouseTax(TxnContext ctx, int unused) => (await GetState(ctx, AccessMode.Read)).Warehouse!.Tax;

    public async Task<int> CustomerDiscount(TxnContext ctx, int customer) =>
        (await GetState(ctx, AccessMode.Read)).Customers[customer - 1].Discount;

    public async Task<long[]> ItemPrices(TxnContext ctx, int[] itemIds) => NewOrderLogic.Prices(await GetState(ctx, AccessMode.Read), itemIds);

    public async Task UpdateStock(TxnContext ctx, StockUpdate update)
    {
        NewOrderLogic.ApplyStock((await GetState(ctx, AccessMode.ReadWrite)).Stock!, update);
    }

    public async Task InsertOrder(TxnContext ctx, OrderRecord order)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite);
        state.Orders = state.Orders!.Add(order);
    }

    public async Task<TpccSummary> Summarize(TxnContext ctx, int unused) => NewOrderLogic.Summarize(await GetState(ctx, AccessMode.Read));

    public Task<TpccSummary[]> SummarizeMany(TxnContext ctx, long[] keys) =>
        Task.WhenAll(keys.Select(key => CallActor(ctx, Actor(key).Summarize, 0)));

    private ISnapperTpccActor Actor(long key) => GrainFactory.Cached<ISnapperTpccActor>(key);
}
