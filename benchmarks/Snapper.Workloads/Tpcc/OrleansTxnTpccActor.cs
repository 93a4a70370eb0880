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

    /// <summary>
    /// The same NewOrder, taking its locks in one global order (<see cref="OrleansTxnLockOrder.Ascending"/>): the district,
    /// then the actors it reads, then the stock and order actors it writes, each one at a time in ascending key order.
    /// </summary>
    [Transaction(TransactionOption.Create)]
    Task<long> NewOrderInAscendingOrder(NewOrderInput input);

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

    public Task<long> NewOrder(NewOrderInput input) => NewOrder(input, OrleansTxnLockOrder.Parallel);

    public Task<long> NewOrderInAscendingOrder(NewOrderInput input) => NewOrder(input, OrleansTxnLockOrder.Ascending);

    private async Task<long> NewOrder(NewOrderInput input, OrleansTxnLockOrder locks)
    {
        // One update up front, so the district is write-locked from the start as in the ACT version; a rollback
        // later undoes the increment with the rest of the transaction.
        var (w, d, scale, districtTax, orderId) = await partition.PerformUpdate(s =>
        {
            var district = s.District ?? throw new InvalidOperationException("NewOrder must enter at a district actor.");
            return (s.WarehouseId, s.DistrictId, district.Scale, district.Tax, district.NextOrderId++);
        });

        // With the ascending order every NewOrder takes its locks in one global order: its district first (holding
        // nothing else, so waiting there closes no cycle), then the actors it reads, then the ones it writes, each in
        // ascending key order. The reads need the order too, although nobody writes those actors: Orleans puts at most
        // MaxLockGroupSize (20) transactions in a lock group, and a reader that finds its actor's group full waits
        // until every transaction of that group has ended. Two NewOrders reading the warehouse and the items in
        // parallel can each be in the full group of one and queued behind the other's on the other actor.
        var warehouseTax = 0;
        var discount = 0;
        long[] prices = [];
        await OrleansTxnLocks.CallAsync(locks,
        [
            (TpccKeys.Warehouse(w), async () => warehouseTax = await Actor(TpccKeys.Warehouse(w)).WarehouseTax()),
            (TpccKeys.Customer(w, d), async () => discount = await Actor(TpccKeys.Customer(w, d)).CustomerDiscount(input.Customer)),
            (TpccKeys.Item(w), async () => prices = await Actor(TpccKeys.Item(w)).ItemPrices(NewOrderLogic.ItemIds(input))),
        ]);

        var (order, total) = NewOrderLogic.Order(orderId, w, input, prices, warehouseTax, districtTax, discount);
        var orderKey = NewOrderLogic.OrderKey(scale, w, d, orderId);
        var writes = new List<(long Key, Func<Task> Call)> { (orderKey, () => Actor(orderKey).InsertOrder(order)) };
        foreach (var (stockKey, update) in NewOrderLogic.StockUpdates(scale, w, input))
        {
            writes.Add((stockKey, () => Actor(stockKey).UpdateStock(update)));
        }

        // In parallel, two NewOrders of different districts that share two stock actors can lock them in opposite orders.
        await OrleansTxnLocks.CallAsync(locks, writes);
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
