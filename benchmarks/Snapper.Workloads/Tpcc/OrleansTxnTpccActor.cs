using Orleans.Concurrency;
using Orleans.Transactions.Abstractions;

namespace Snapper.Workloads.Tpcc;

/// <summary>TPC-C on Microsoft.Orleans.Transactions: the same partitions and call graph as the Snapper actor.</summary>
public interface IOrleansTxnTpccActor : IGrainWithIntegerKey
{
    [Transaction(TransactionOption.Create)]
    Task Load(TpccLoad load);

    [Transaction(TransactionOption.Create)]
    Task<long> NewOrder(NewOrderInput input);

    [Transaction(TransactionOption.Join)]
    Task<int> WarehouseTax();

    [Transaction(TransactionOption.Join)]
    Task<int> CustomerDiscount(int customer);

    [Transaction(TransactionOption.Join)]
    Task<long[]> ItemPrices(int[] itemIds);

    [Transaction(TransactionOption.Join)]
    Task UpdateStock(StockUpdate update);

    [Transaction(TransactionOption.Join)]
    Task InsertOrder(OrderRecord order);

    [Transaction(TransactionOption.CreateOrJoin)]
    Task<TpccSummary> Summarize();
}

[Reentrant]
public sealed class OrleansTxnTpccActor(
    [TransactionalState("partition", OrleansTxnStorage.Name)] ITransactionalState<TpccPartition> partition) : Grain, IOrleansTxnTpccActor
{
    public Task Load(TpccLoad load) => partition.PerformUpdate(state => state.LoadFrom(TpccPartition.Create(load)));

    public async Task<long> NewOrder(NewOrderInput input)
    {
        // One update up front, so the district is write-locked from the start as in the ACT version; a rollback
        // later undoes the increment with the rest of the transaction.
        var (w, d, scale, districtTax, orderId) = await partition.PerformUpdate(s =>
        {
            var district = s.District ?? throw new InvalidOperationException("NewOrder must enter at a district actor.");
            return (s.WarehouseId, s.DistrictId, district.Scale, district.Tax, district.NextOrderId++);
        });

        var warehouseTax = Actor(TpccKeys.Warehouse(w)).WarehouseTax();
        var discount = Actor(TpccKeys.Customer(w, d)).CustomerDiscount(input.Customer);
        var prices = Actor(TpccKeys.Item(w)).ItemPrices(NewOrderLogic.ItemIds(input));
        await Task.WhenAll(warehouseTax, discount, prices);

        var (order, total) = NewOrderLogic.Order(orderId, w, input, prices.Result, warehouseTax.Result, districtTax, discount.Result);
        var writes = NewOrderLogic.StockUpdates(scale, w, input)
            .Select(s => Actor(s.StockKey).UpdateStock(s.Update))
            .Append(Actor(NewOrderLogic.OrderKey(scale, w, d, orderId)).InsertOrder(order));
        await Task.WhenAll(writes);
        return total;
    }

    public Task<int> WarehouseTax() => partition.PerformRead(s => s.Warehouse!.Tax);

    public Task<int> CustomerDiscount(int customer) => partition.PerformRead(s => s.Customers[customer - 1].Discount);

    public Task<long[]> ItemPrices(int[] itemIds) => partition.PerformRead(s => NewOrderLogic.Prices(s, itemIds));

    public Task UpdateStock(StockUpdate update) => partition.PerformUpdate(s => NewOrderLogic.ApplyStock(s.Stock!, update));

    public Task InsertOrder(OrderRecord order) => partition.PerformUpdate(s => s.Orders = s.Orders!.Add(order));

    public Task<TpccSummary> Summarize() => partition.PerformRead(NewOrderLogic.Summarize);

    private IOrleansTxnTpccActor Actor(long key) => GrainFactory.Cached<IOrleansTxnTpccActor>(key);
}
