using System.Collections.Immutable;

namespace Snapper.Workloads.Tpcc;

/// <summary>One requested line of a NewOrder: an item, the warehouse that supplies it, and a quantity.</summary>
[GenerateSerializer, Immutable]
public sealed record OrderLineInput([property: Id(0)] int ItemId, [property: Id(1)] int SupplyWarehouse, [property: Id(2)] int Quantity);

/// <summary>A NewOrder as the client issues it, to the district actor (the transaction's first actor).</summary>
[GenerateSerializer, Immutable]
public sealed record NewOrderInput([property: Id(0)] int Customer, [property: Id(1)] OrderLineInput[] Lines);

/// <summary>What one stock partition does for a NewOrder: the lines it supplies.</summary>
[GenerateSerializer, Immutable]
public sealed record StockUpdate([property: Id(0)] int HomeWarehouse, [property: Id(1)] OrderLineInput[] Lines);

/// <summary>
/// TPC-C's deliberate rollback: 1% of NewOrders name an item that does not exist, and the whole transaction
/// must leave nothing behind.
/// </summary>
[GenerateSerializer]
public sealed class UnknownItemException(int itemId) : Exception($"item {itemId} does not exist")
{
    [Id(0)] public int ItemId { get; } = itemId;
}

/// <summary>What an actor holds, summed for the consistency check after a run.</summary>
[GenerateSerializer, Immutable]
public sealed record TpccSummary(
    [property: Id(0)] int Warehouse,
    [property: Id(1)] int District,
    [property: Id(2)] int OrdersIssued,
    [property: Id(3)] int OrdersStored,
    [property: Id(4)] int MaxOrderId,
    [property: Id(5)] long LineQuantity,
    [property: Id(6)] long StockYtd,
    [property: Id(7)] long StockOrderCount,
    [property: Id(8)] long OrderLines);

/// <summary>
/// The NewOrder logic (TPC-C §2.4.2) as pure functions over the rows, shared by every execution mode so that
/// the modes differ only in how they reach the actors.
/// </summary>
public static class NewOrderLogic
{
    /// <summary>The item prices of the lines, in line order; an unknown item rolls the transaction back.</summary>
    public static long[] Prices(TpccPartition items, int[] itemIds)
    {
        var prices = new long[itemIds.Length];
        for (var i = 0; i < itemIds.Length; i++)
        {
            var id = itemIds[i];
            if (id < 1 || id > items.ItemPrices.Length)
            {
                throw new UnknownItemException(id);
            }

            prices[i] = items.ItemPrices[id - 1];
        }

        return prices;
    }

    /// <summary>Groups the lines by the stock actor that supplies them.</summary>
    public static IEnumerable<(long StockKey, StockUpdate Update)> StockUpdates(TpccScale scale, int homeWarehouse, NewOrderInput input) =>
        input.Lines
            .GroupBy(line => TpccKeys.Stock(line.SupplyWarehouse, scale.StockPartitionOf(line.ItemId)))
            .Select(group => (group.Key, new StockUpdate(homeWarehouse, group.ToArray())));

    /// <summary>Applies TPC-C's stock rule to the supplied lines; a stock actor holds <c>StockPerActor</c> consecutive items.</summary>
    public static void ApplyStock(StockRow[] rows, StockUpdate update)
    {
        foreach (var line in update.Lines)
        {
            var row = rows[(line.ItemId - 1) % rows.Length];
            row.Quantity = row.Quantity >= line.Quantity + 10 ? row.Quantity - line.Quantity : row.Quantity - line.Quantity + 91;
            row.Ytd += line.Quantity;
            row.OrderCount++;
            if (line.SupplyWarehouse != update.HomeWarehouse)
            {
                row.RemoteCount++;
            }
        }
    }

    /// <summary>The order record and its total (with discount and taxes, in cents).</summary>
    public static (OrderRecord Order, long Total) Order(int orderId, int homeWarehouse, NewOrderInput input, long[] prices, int warehouseTax, int districtTax, int discount)
    {
        var lines = ImmutableArray.CreateBuilder<OrderLine>(input.Lines.Length);
        long sum = 0;
        for (var i = 0; i < input.Lines.Length; i++)
        {
            var line = input.Lines[i];
            var amount = prices[i] * line.Quantity;
            sum += amount;
            lines.Add(new OrderLine(line.ItemId, line.SupplyWarehouse, line.Quantity, amount));
        }

        var allLocal = input.Lines.All(line => line.SupplyWarehouse == homeWarehouse);
        var total = sum * (10_000 - discount) / 10_000 * (10_000 + warehouseTax + districtTax) / 10_000;
        return (new OrderRecord(orderId, input.Customer, allLocal, lines.MoveToImmutable()), total);
    }

    /// <summary>The order partition of the district that stores an order.</summary>
    public static long OrderKey(TpccScale scale, int w, int d, int orderId) => TpccKeys.Order(w, d, orderId % scale.OrderPartitionsPerDistrict);

    public static int[] ItemIds(NewOrderInput input) => input.Lines.Select(line => line.ItemId).ToArray();

    public static TpccSummary Summarize(TpccPartition state)
    {
        var orders = state.Orders ?? [];
        return new TpccSummary(
            state.WarehouseId,
            state.DistrictId,
            OrdersIssued: state.District is { } district ? district.NextOrderId - 1 : 0,
            OrdersStored: orders.Count,
            MaxOrderId: orders.IsEmpty ? 0 : orders.Max(o => o.OrderId),
            LineQuantity: orders.Sum(o => o.Lines.Sum(l => (long)l.Quantity)),
            StockYtd: state.Stock?.Sum(s => s.Ytd) ?? 0,
            StockOrderCount: state.Stock?.Sum(s => (long)s.OrderCount) ?? 0,
            OrderLines: orders.Sum(o => (long)o.Lines.Length));
    }
}
