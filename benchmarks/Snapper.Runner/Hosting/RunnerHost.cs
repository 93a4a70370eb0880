using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Serilog;
using Serilog.Events;
using Snapper.Workloads;

namespace Snapper.Runner.Hosting;

/// <summary>
/// The host the runner drives: by default an embedded single silo with localhost clustering and an
/// in-process client; with <c>--cluster</c>, a client of a running cluster (see deploy/). Logs go to the
/// console (warnings) and to a file under the data folder (information).
/// </summary>
public static class RunnerHost
{
    private static int _embeddedSilos;

    /// <summary>Sends the runner's logs to the console (warnings) and to <c>logs/</c> under the data folder; call once.</summary>
    public static void ConfigureLogging(string dataDirectory)
    {
        var logDirectory = Path.Combine(dataDirectory, "logs");
        Directory.CreateDirectory(logDirectory);
        Log.Logger = new LoggerConfiguration()
            .MinimumLevel.Information()
            .MinimumLevel.Override("Orleans", LogEventLevel.Warning)
            .MinimumLevel.Override("Microsoft", LogEventLevel.Warning)
            // Orleans' placement runs each new activation through a resilience pipeline whose telemetry logs two lines
            // per activation at Information: 20,000 lines (4 MB) while a 10,000-actor workload is prepared.
            .MinimumLevel.Override("Polly", LogEventLevel.Warning)
            .Filter.ByExcluding(Snapper.Workloads.Logging.WatchdogStartAlarm.IsFalseAlarm)
            .WriteTo.Console(restrictedToMinimumLevel: LogEventLevel.Warning)
            .WriteTo.File(Path.Combine(logDirectory, "runner-.log"), rollingInterval: RollingInterval.Day)
            .CreateLogger();
    }

    /// <summary>A host with an embedded silo of the given durability, or a client of the cluster at the gateway port.</summary>
    public static IHost Create(string[] args, int? clusterGatewayPort, BenchmarkDurability durability)
    {
        // The data folder (and its write-ahead log) usually lies under the working directory, the host's content root;
        // a host that reloads its configuration on change would have its file watcher woken by every log write.
        var configuration = new ConfigurationManager();
        configuration.AddInMemoryCollection([new("hostBuilder:reloadConfigOnChange", "false")]);
        var builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { Args = args, Configuration = configuration });
        builder.Services.AddSerilog();
        if (clusterGatewayPort is { } port)
        {
            builder.UseOrleansClient(client => client
                .UseLocalhostClustering(port)
                .AddSnapperClient()
                .UseTransactions());
        }
        else
        {
            // Each embedded silo of one runner process gets its own ports: a silo started where a stopped one
            // listened would be mistaken for it by the runtime's caches.
            var instance = Interlocked.Increment(ref _embeddedSilos) - 1;
            builder.UseOrleans(silo => silo
                .UseLocalhostClustering(siloPort: 11111 + instance, gatewayPort: 30000 + instance)
                .ConfigureBenchmarks(builder.Configuration, durability));
        }

        return builder.Build();
    }
}
