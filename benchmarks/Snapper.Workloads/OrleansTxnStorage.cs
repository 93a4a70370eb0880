namespace Snapper.Workloads;

/// <summary>Names the Orleans Transactions baseline is configured by.</summary>
public static class OrleansTxnStorage
{
    /// <summary>
    /// Storage provider name; the benchmark silo registers it (<see cref="BenchmarkSilo"/>: by-reference memory
    /// storage when nothing is logged, fsynced file storage when Snapper logs).
    /// </summary>
    public const string Name = "orleans-txn";

    /// <summary>
    /// The configuration section bound to Orleans' <c>TransactionalStateOptions</c> on a benchmark silo, e.g.
    /// <c>OrleansTransactions:LockTimeout</c>.
    /// </summary>
    public const string OptionsSection = "OrleansTransactions";
}
