namespace Snapper.Runner.Cluster;

/// <summary>
/// What one process of the cluster (a silo, or the runner itself as <c>client</c>) used during a measured cell.
/// </summary>
/// <param name="Name">master, worker-K, or client.</param>
/// <param name="UserSeconds">User CPU time over the cell; NaN if the process could not be read at both ends.</param>
/// <param name="SystemSeconds">System (kernel) CPU time over the cell, e.g. for messages and fsyncs; NaN likewise.</param>
/// <param name="WallSeconds">Length of the cell.</param>
/// <param name="PactBatches">PACT batches the silo emitted (the master's are global batches); null without its stats file.</param>
/// <param name="BatchedPacts">PACTs in those batches; null without its stats file.</param>
public sealed record SiloUsage(string Name, double UserSeconds, double SystemSeconds, double WallSeconds, long? PactBatches, long? BatchedPacts)
{
    /// <summary>User plus system CPU time over the cell.</summary>
    public double CpuSeconds => UserSeconds + SystemSeconds;

    /// <summary>The process's CPU as a share of one core over the cell, in percent (above 100 on several cores).</summary>
    public double PercentOfCore => CpuSeconds / WallSeconds * 100;

    /// <summary>Microseconds of the process's CPU per committed transaction of the cell.</summary>
    public double MicrosecondsPer(long count) => count == 0 ? double.NaN : CpuSeconds * 1e6 / count;
}
