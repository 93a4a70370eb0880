using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Orleans.Runtime.Hosting;
using Orleans.Storage;
using Snapper.Hosting;
using Snapper.Workloads.Storage;

namespace Snapper.Workloads;

/// <summary>
/// How durable a benchmark silo is: Snapper's write-ahead log and Orleans Transactions' storage follow the same
/// setting, on the same disk, so that modes compare fairly.
/// </summary>
/// <param name="Name">The label results carry (<c>log=...</c>).</param>
/// <param name="DataFolder">Where both write; null keeps everything in memory (the thesis's "CC only").</param>
/// <param name="Fsync">Whether writes are fsynced before they are acknowledged.</param>
/// <param name="CheckpointInterval">Snapper's checkpoint interval; zero turns checkpoints off.</param>
public sealed record BenchmarkDurability(string Name, string? DataFolder, bool Fsync, TimeSpan CheckpointInterval)
{
    /// <summary>Everything in memory, nothing logged.</summary>
    public static BenchmarkDurability InMemory { get; } = new("off", null, Fsync: false, TimeSpan.Zero);
}

/// <summary>
/// The silo configuration every benchmark host uses, so that all modes run on the same settings: Snapper
/// (settings from the "Snapper" section, logging as <see cref="BenchmarkDurability"/> says) and Orleans
/// Transactions with its state in memory by reference (<see cref="ByReferenceGrainStorage"/>: like Snapper without a
/// log, it serializes nothing), or in fsynced files next to Snapper's log (<see cref="FileGrainStorage"/>).
/// </summary>
public static class BenchmarkSilo
{
    public static ISiloBuilder ConfigureBenchmarks(this ISiloBuilder silo, IConfiguration configuration, BenchmarkDurability durability)
    {
        silo.AddSnapper(configuration.GetSection(SnapperOptions.SectionName));
        silo.Services.Configure<SnapperOptions>(options =>
        {
            options.DataFolder = durability.DataFolder is null ? null : Path.Combine(durability.DataFolder, "snapper");
            options.LogFsync = durability.Fsync;
            options.CheckpointInterval = durability.CheckpointInterval;
        });
        silo.Services.Configure<global::Marketplace.MarketplaceOptions>(configuration.GetSection("Marketplace"));
        silo.Services.Configure<Orleans.Configuration.TransactionalStateOptions>(configuration.GetSection(OrleansTxnStorage.OptionsSection));
        if (durability.DataFolder is null)
        {
            silo.Services.AddGrainStorage(OrleansTxnStorage.Name, (_, _) => new ByReferenceGrainStorage());
        }
        else
        {
            var folder = Path.Combine(durability.DataFolder, "orleans-transactions");
            silo.Services.AddGrainStorage(OrleansTxnStorage.Name, (services, _) =>
                new FileGrainStorage(folder, durability.Fsync, new OrleansGrainStorageSerializer(services.GetRequiredService<Orleans.Serialization.Serializer>())));
        }

        return silo.UseTransactions();
    }
}
