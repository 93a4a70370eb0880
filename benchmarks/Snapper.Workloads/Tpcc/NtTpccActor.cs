using Orleans.Concurrency;

namespace Snapper.Workloads.Tpcc;

/// <summary>TPC-C with plain Orleans calls (NT): the same partitions and call graph, no isolation or atomicity.</summary>
public interface INtTpccActor : IGrainWithIntegerKey
{
    Task Load(TpccLoad load);

    Task<long> NewOrder(NewOrderInput input);

    Task<int> WarehouseTax();

    Task<int> CustomerDiscount(int customer);

    Task<long[]> ItemPrices(int[] itemIds);

    Task UpdateStock(StockUpdate update);

    Task InsertOrder(OrderRecord order);

    Task<TpccSummary> Summarize();
}

/// <summary>Reentrant for the same reason as SmallBank's NT account: call cycles would otherwise deadlock.</summary>
[Reentrant]
public sealed class NtTpccActor : Grain, INtTpccActor
{
    private TpccPartition _state = new();

    public Task Load(TpccLoad load)
    {
        _state = TpccPartition.Create(load);
        return Task.CompletedTask;
    }

    public async Task<long> NewOrder(NewOrderInput input)
    {
        var district = _state.District ?? throw new InvalidOperationException("NewOrder must enter at a district actor.");
        var (w, d, scale) = (_state.WarehouseId, _state.DistrictId, district.Scale);

        var warehouseTax = Actor(TpccKeys.Warehouse(w)).WarehouseTax();
        var discount = Actor(TpccKeys.Customer(w, d)).CustomerDiscount(input.Customer);
        var prices = Actor(TpccKeys.Item(w)).ItemPrices(NewOrderLogic.ItemIds(input));
        await Task.WhenAll(warehouseTax, discount, prices);

        var orderId = district.NextOrderId++;
        var (order, total) = NewOrderLogic.Order(orderId, w, input, prices.Result, warehouseTax.Result, district.Tax, discount.Result);
        var writes = NewOrderLogic.StockUpdates(scale, w, input)
            .Select(s => Actor(s.StockKey).UpdateStock(s.Update))
            .Append(Actor(NewOrderLogic.OrderKey(scale, w, d, orderId)).InsertOrder(order));
        await Task.WhenAll(writes);
        return total;
    }

    public Task<int> WarehouseTax() => Task.FromResult(_state.Warehouse!.Tax);

    public Task<int> CustomerDiscount(int customer) => Task.FromResult(_state.Customers[customer - 1].Discount);

    public Task<long[]> ItemPrices(int[] itemIds) => Task.FromResult(NewOrderLogic.Prices(_state, itemIds));

    public Task UpdateStock(StockUpdate update)
    {
        NewOrderLogic.ApplyStock(_state.Stock!, update);
        return Task.CompletedTask;
    }

    public Task InsertOrder(OrderRecord order)
    {
        _state.Orders = _state.Orders!.Add(order);
        return Task.CompletedTask;
    }

    public Task<TpccSummary> Summarize() => Task.FromResult(NewOrderLogic.Summarize(_state));

    private INtTpccActor Actor(long key) => GrainFactory.Cached<INtTpccActor>(key);
}
