using System.Diagnostics;
using System.Globalization;
using Snapper.Runner.Hosting;
using Snapper.Workloads;

namespace Snapper.Runner.Experiment;

/// <summary>
/// What durability costs at restart: after a logged run, the size of the data folder and how long a silo started on
/// it takes to recover (Snapper's recovery as it reports it, and the whole silo start).
/// </summary>
public sealed record RestartReport(string Durability, long SnapperBytes, long OrleansTxnBytes, double? RecoveryMs, double SiloStartMs)
{
    public string Text => string.Create(CultureInfo.InvariantCulture,
        $"log={Durability}: data folder {Mib(SnapperBytes + OrleansTxnBytes)} (Snapper {Mib(SnapperBytes)}, Orleans Transactions {Mib(OrleansTxnBytes)}); " +
        $"restart on it: Snapper recovery {RecoveryMs?.ToString("N0", CultureInfo.InvariantCulture) ?? "?"} ms, silo start {SiloStartMs:N0} ms");

    public static async Task<RestartReport> MeasureAsync(BenchmarkDurability durability, string folder, CancellationToken cancellationToken)
    {
        var snapperBytes = Bytes(Path.Combine(folder, "snapper"));
        var orleansBytes = Bytes(Path.Combine(folder, "orleans-transactions"));
        using var log = new LogStats();
        var clock = Stopwatch.StartNew();
        using var host = RunnerHost.Create([], clusterGatewayPort: null, durability);
        await host.StartAsync(cancellationToken);
        var started = clock.Elapsed.TotalMilliseconds;
        await host.StopAsync(CancellationToken.None);
        return new RestartReport(durability.Name, snapperBytes, orleansBytes, log.LastRecoveryMs, started);
    }

    private static long Bytes(string folder) =>
        Directory.Exists(folder) ? new DirectoryInfo(folder).EnumerateFiles("*", SearchOption.AllDirectories).Sum(f => f.Length) : 0;

    private static string Mib(long bytes) => $"{bytes / (1024.0 * 1024.0):N1} MiB";
}
