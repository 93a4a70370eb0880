namespace Snapper.Workloads;

/// <summary>How a workload's transactions are executed. New protocols join here as new modes.</summary>
public enum BenchmarkMode
{
    /// <summary>Plain Orleans grain calls, no transactions: the upper bound.</summary>
    NT,

    /// <summary>Snapper ACTs: S2PL with wait-die and 2PC.</summary>
    ACT,

    /// <summary>The same workload on Microsoft.Orleans.Transactions.</summary>
    OrleansTxn,

    /// <summary>Snapper PACTs: declared accesses, ordered in batches, never aborted by conflicts.</summary>
    PACT,

    /// <summary>Snapper PACTs and ACTs at once; the workload's PACT share decides each transaction's mode.</summary>
    Hybrid,
}
