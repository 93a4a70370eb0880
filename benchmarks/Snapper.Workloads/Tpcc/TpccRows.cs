using System.Collections.Immutable;

namespace Snapper.Workloads.Tpcc;

/// <summary>The TPC-C scale of one run; every actor is loaded from it, so no table data crosses the wire at load.</summary>
[GenerateSerializer, Immutable]
public sealed record TpccScale(
    [property: Id(0)] int Warehouses,
    [property: Id(1)] int Items,
    [property: Id(2)] int StockPerActor,
    [property: Id(3)] int OrderPartitionsPerDistrict)
{
    public const int DistrictsPerWarehouse = 10;
    public const int CustomersPerDistrict = 3_000;

    public int StockActorsPerWarehouse => (Items + StockPerActor - 1) / StockPerActor;

    public int StockPartitionOf(int itemId) => (itemId - 1) / StockPerActor;

}

/// <summary>Which actor to load: its table, warehouse, district and partition.</summary>
[GenerateSerializer, Immutable]
public sealed record TpccLoad(
    [property: Id(0)] TpccScale Scale,
    [property: Id(1)] TpccTable Table,
    [property: Id(2)] int Warehouse,
    [property: Id(3)] int District,
    [property: Id(4)] int Partition)
{
    public long Key => Table switch
    {
        TpccTable.Warehouse => TpccKeys.Warehouse(Warehouse),
        TpccTable.District => TpccKeys.District(Warehouse, District),
        TpccTable.Customer => TpccKeys.Customer(Warehouse, District),
        TpccTable.Item => TpccKeys.Item(Warehouse),
        TpccTable.Stock => TpccKeys.Stock(Warehouse, Partition),
        TpccTable.Order => TpccKeys.Order(Warehouse, District, Partition),
        _ => throw new ArgumentOutOfRangeException(nameof(Table), Table, null),
    };

    /// <summary>Every actor of a run, in load order.</summary>
    public static IEnumerable<TpccLoad> All(TpccScale scale)
    {
        for (var w = 1; w <= scale.Warehouses; w++)
        {
            yield return new(scale, TpccTable.Warehouse, w, 0, 0);
            yield return new(scale, TpccTable.Item, w, 0, 0);
            for (var d = 1; d <= TpccScale.DistrictsPerWarehouse; d++)
            {
                yield return new(scale, TpccTable.District, w, d, 0);
                yield return new(scale, TpccTable.Customer, w, d, 0);
                for (var p = 0; p < scale.OrderPartitionsPerDistrict; p++)
                {
                    yield return new(scale, TpccTable.Order, w, d, p);
                }
            }

            for (var s = 0; s < scale.StockActorsPerWarehouse; s++)
            {
                yield return new(scale, TpccTable.Stock, w, 0, s);
            }
        }
    }
}

[GenerateSerializer]
public sealed class WarehouseRow
{
    /// <summary>Sales tax in basis points.</summary>
    [Id(0)] public int Tax { get; set; }

    [Id(1)] public long Ytd { get; set; }
}

[GenerateSerializer]
public sealed class DistrictRow
{
    [Id(0)] public int Tax { get; set; }

    /// <summary>The id the next order of this district gets; TPC-C's D_NEXT_O_ID.</summary>
    [Id(1)] public int NextOrderId { get; set; } = 1;

    [Id(2)] public TpccScale Scale { get; set; } = null!;
}

[GenerateSerializer, Immutable]
public sealed record CustomerRow([property: Id(0)] int Discount, [property: Id(1)] bool GoodCredit);

[GenerateSerializer]
public sealed class StockRow
{
    [Id(0)] public int Quantity { get; set; }

    [Id(1)] public long Ytd { get; set; }

    [Id(2)] public int OrderCount { get; set; }

    [Id(3)] public int RemoteCount { get; set; }
}

[GenerateSerializer, Immutable]
public sealed record OrderLine(
    [property: Id(0)] int ItemId,
    [property: Id(1)] int SupplyWarehouse,
    [property: Id(2)] int Quantity,
    [property: Id(3)] long Amount);

[GenerateSerializer, Immutable]
public sealed record OrderRecord(
    [property: Id(0)] int OrderId,
    [property: Id(1)] int Customer,
    [property: Id(2)] bool AllLocal,
    [property: Id(3)] ImmutableArray<OrderLine> Lines);

/// <summary>
/// The state of one TPC-C actor: exactly one of the tables is set. The read-only tables and the insert-only
/// order list are immutable collections, which Orleans' copier shares instead of copying, so a transaction's
/// private copy of a large partition costs the same as a small one.
/// </summary>
[GenerateSerializer]
public sealed class TpccPartition
{
    [Id(0)] public WarehouseRow? Warehouse { get; set; }

    [Id(1)] public DistrictRow? District { get; set; }

    [Id(2)] public ImmutableArray<CustomerRow> Customers { get; set; } = [];

    /// <summary>Item prices in cents, indexed by item id - 1.</summary>
    [Id(3)] public ImmutableArray<long> ItemPrices { get; set; } = [];

    [Id(4)] public StockRow[]? Stock { get; set; }

    [Id(5)] public ImmutableList<OrderRecord>? Orders { get; set; }

    [Id(6)] public int WarehouseId { get; set; }

    [Id(7)] public int DistrictId { get; set; }

    /// <summary>Replaces every row with those of <paramref name="other"/> (a transaction's working copy cannot be swapped whole).</summary>
    public void LoadFrom(TpccPartition other)
    {
        Warehouse = other.Warehouse;
        District = other.District;
        Customers = other.Customers;
        ItemPrices = other.ItemPrices;
        Stock = other.Stock;
        Orders = other.Orders;
        WarehouseId = other.WarehouseId;
        DistrictId = other.DistrictId;
    }

    /// <summary>Builds an actor's initial rows deterministically from its coordinates.</summary>
    public static TpccPartition Create(TpccLoad load)
    {
        var random = new Random(HashCode.Combine(load.Table, load.Warehouse, load.District, load.Partition));
        var partition = new TpccPartition { WarehouseId = load.Warehouse, DistrictId = load.District };
        switch (load.Table)
        {
            case TpccTable.Warehouse:
                partition.Warehouse = new WarehouseRow { Tax = random.Next(0, 2_001), Ytd = 30_000_000 };
                break;
            case TpccTable.District:
                partition.District = new DistrictRow { Tax = random.Next(0, 2_001), Scale = load.Scale };
                break;
            case TpccTable.Customer:
                partition.Customers = [.. Enumerable.Range(0, TpccScale.CustomersPerDistrict)
                    .Select(_ => new CustomerRow(random.Next(0, 5_001), random.Next(10) != 0))];
                break;
            case TpccTable.Item:
                partition.ItemPrices = [.. Enumerable.Range(0, load.Scale.Items).Select(_ => (long)random.Next(100, 10_001))];
                break;
            case TpccTable.Stock:
                partition.Stock = [.. Enumerable.Range(0, load.Scale.StockPerActor).Select(_ => new StockRow { Quantity = random.Next(10, 101) })];
                break;
            case TpccTable.Order:
                partition.Orders = [];
                break;
            default:
                throw new ArgumentOutOfRangeException(nameof(load), load.Table, "unknown table");
        }

        return partition;
    }
}
