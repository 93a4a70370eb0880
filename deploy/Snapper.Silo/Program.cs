using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Snapper.Workloads;

// A silo with localhost clustering that hosts Snapper and the benchmark workloads. Settings come from
// configuration: e.g. --Silo:SiloPort 11111 --Silo:GatewayPort 30000 --Snapper:Coordinators 8. Each silo logs to
// its own data folder (--Silo:DataFolder, default data/silo-<port>; "off" keeps everything in memory).
var builder = Host.CreateApplicationBuilder(args);
builder.Logging.AddFilter("Orleans", LogLevel.Warning);
var siloPort = builder.Configuration.GetValue("Silo:SiloPort", 11111);
var gatewayPort = builder.Configuration.GetValue("Silo:GatewayPort", 30000);
var dataFolder = builder.Configuration.GetValue("Silo:DataFolder", Path.Combine("data", $"silo-{siloPort}"))!;
var durability = dataFolder == "off"
    ? BenchmarkDurability.InMemory
    : new BenchmarkDurability("fsync", Path.GetFullPath(dataFolder), Fsync: true, CheckpointInterval: TimeSpan.FromMinutes(1));
builder.UseOrleans(silo => silo
    .UseLocalhostClustering(siloPort, gatewayPort)
    .ConfigureBenchmarks(builder.Configuration, durability));
using var host = builder.Build();
Console.WriteLine($"Snapper silo: silo port {siloPort}, gateway port {gatewayPort}, data {durability.DataFolder ?? "in memory"}. Ctrl+C stops it.");
await host.RunAsync();
