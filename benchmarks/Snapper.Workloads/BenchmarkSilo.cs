using Microsoft.Extensions.Configuration;
using Snapper.Hosting;

namespace Snapper.Workloads;

/// <summary>
/// The silo configuration every benchmark host uses, so that all modes run on the same settings: Snapper
/// (settings from the "Snapper" section) and Orleans Transactions with its state in memory storage, as
/// Snapper runs without a log until durability lands.
/// </summary>
public static class BenchmarkSilo
{
    public static ISiloBuilder ConfigureBenchmarks(this ISiloBuilder silo, IConfiguration configuration) => silo
        .AddSnapper(configuration.GetSection(SnapperOptions.SectionName))
        .AddMemoryGrainStorage(OrleansTxnStorage.Name)
        .UseTransactions();
}
