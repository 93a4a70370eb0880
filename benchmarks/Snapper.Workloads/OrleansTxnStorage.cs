namespace Snapper.Workloads;

/// <summary>The grain storage the Orleans Transactions baseline keeps its transactional state in.</summary>
public static class OrleansTxnStorage
{
    /// <summary>
    /// Storage provider name; the benchmark silo registers it (<see cref="BenchmarkSilo"/>: by-reference memory
    /// storage when nothing is logged, fsynced file storage when Snapper logs).
    /// </summary>
    public const string Name = "orleans-txn";
}
