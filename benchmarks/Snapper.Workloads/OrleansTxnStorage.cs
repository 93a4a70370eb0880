namespace Snapper.Workloads;

/// <summary>The grain storage the Orleans Transactions baseline keeps its transactional state in.</summary>
public static class OrleansTxnStorage
{
    /// <summary>Storage provider name; the host registers it (memory storage until Snapper logs to disk too).</summary>
    public const string Name = "orleans-txn";
}
