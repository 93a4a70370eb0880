namespace Snapper.Workloads.Tpcc;

/// <summary>What part of a warehouse an actor holds (thesis Fig. 3.21a).</summary>
public enum TpccTable
{
    Warehouse = 1,
    District = 2,
    Customer = 3,
    Item = 4,
    Stock = 5,
    Order = 6,
}

/// <summary>
/// Integer actor keys for the TPC-C partitions: the table in the top byte, then the warehouse, the district and
/// the partition number, so that every partition of every warehouse is one actor of one grain type per mode.
/// </summary>
public static class TpccKeys
{
    private const int TableShift = 56;
    private const int WarehouseShift = 32;
    private const int DistrictShift = 24;
    private const int PartitionLimit = 1 << DistrictShift;

    public static long Warehouse(int w) => Key(TpccTable.Warehouse, w, 0, 0);

    public static long District(int w, int d) => Key(TpccTable.District, w, d, 0);

    /// <summary>One customer partition per district.</summary>
    public static long Customer(int w, int d) => Key(TpccTable.Customer, w, d, 0);

    /// <summary>The item table is read-only and held once per warehouse, so that item reads stay local.</summary>
    public static long Item(int w) => Key(TpccTable.Item, w, 0, 0);

    public static long Stock(int w, int partition) => Key(TpccTable.Stock, w, 0, partition);

    public static long Order(int w, int d, int partition) => Key(TpccTable.Order, w, d, partition);

    /// <summary>The warehouse and district a key was made from.</summary>
    public static (int Warehouse, int District) Decode(long key) =>
        ((int)((key >> WarehouseShift) & 0xFF_FFFF), (int)((key >> DistrictShift) & 0xFF));

    private static long Key(TpccTable table, int w, int d, int partition)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(partition);
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual(partition, PartitionLimit);
        return ((long)table << TableShift) | ((long)w << WarehouseShift) | ((long)d << DistrictShift) | (long)partition;
    }
}
