using System.Globalization;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using OpenTelemetry.Metrics;
using Orleans.Configuration;
using Orleans.Dashboard;
using Serilog;
using Serilog.Events;
using Snapper.Hosting;
using Snapper.Silo;
using Snapper.Workloads;

// A stand-alone silo hosting Snapper and the benchmark workloads: an embedded silo with localhost clustering, or the
// master or a worker of a SnapperD cluster whose silos share a Redis membership table. Flags (see SiloSettings):
//   --role embedded|master|worker --workers N --worker-index K --redis host:port
//   --silo-port P --gateway-port G --advertise IP --cluster-id ID --service-id ID --data DIR|off --log FILE --stats FILE
//   --web-port P|off --dashboard on|off --metrics prometheus,otlp|off --otlp-endpoint URL
// and any Snapper setting as --Snapper:Name value (e.g. --Snapper:Coordinators 8).
// `log DIR [--actor ID] [--state]` starts no silo: it prints what a data folder holds (LogCommand).
if (args is [LogCommand.Name, .. var logArgs])
{
    return LogCommand.Run(logArgs, Console.Out, Console.Error);
}

var builder = WebApplication.CreateBuilder(new WebApplicationOptions { Args = null });
builder.Configuration.AddCommandLine(args, SiloSettings.SwitchMappings);

SiloSettings settings;
try
{
    settings = SiloSettings.Read(builder.Configuration);
}
catch (SiloConfigurationException e)
{
    Console.Error.WriteLine($"Snapper silo: {e.Message}");
    return 2;
}

// Snapper's options bind from the same configuration: write the role back in its canonical spelling.
builder.Configuration["Snapper:Role"] = settings.Role.ToString();
builder.Configuration["Snapper:Workers"] = settings.Workers.ToString(CultureInfo.InvariantCulture);

Directory.CreateDirectory(Path.GetDirectoryName(settings.LogFile)!);
Log.Logger = new LoggerConfiguration()
    .MinimumLevel.Information()
    // Orleans' information lines (membership changes, silos declared dead) are what an operator reads after a crash.
    .MinimumLevel.Override("Microsoft", LogEventLevel.Warning)
    // The host logs a failed start with its whole stack; this program logs it once below, with one line on the console.
    .MinimumLevel.Override("Microsoft.Extensions.Hosting", LogEventLevel.Fatal)
    // Orleans' placement retries log every placement through Polly at information: thousands of lines a second.
    .MinimumLevel.Override("Polly", LogEventLevel.Warning)
    // A line per connection opened or closed, including every port probe of deploy/cluster-status.sh.
    .MinimumLevel.Override("Orleans.Runtime.Messaging", LogEventLevel.Warning)
    // Orleans' watchdog warns of a stall as long as the machine's uptime as a silo starts: a false alarm (see there).
    .Filter.ByExcluding(Snapper.Workloads.Logging.WatchdogStartAlarm.IsFalseAlarm)
    .Enrich.WithProperty("Silo", settings.Name)
    // Stack traces go to the file only: the console (the deploy scripts' .out file) keeps one line per warning.
    .WriteTo.Console(restrictedToMinimumLevel: LogEventLevel.Warning, outputTemplate: "[{Timestamp:HH:mm:ss} {Level:u3}] {SourceContext}: {Message:lj}{NewLine}")
    .WriteTo.File(settings.LogFile, outputTemplate: "{Timestamp:yyyy-MM-dd HH:mm:ss.fff} [{Level:u3}] {SourceContext}: {Message:lj}{NewLine}{Exception}")
    .CreateLogger();
builder.Logging.ClearProviders();
builder.Services.AddSerilog();

var durability = settings.DataFolder is null
    ? BenchmarkDurability.InMemory
    : new BenchmarkDurability("fsync", settings.DataFolder, Fsync: true, CheckpointInterval: TimeSpan.FromMinutes(1));
builder.UseOrleans(silo =>
{
    // The name shows in the membership table (and Orleans' logs), so an operator sees which silo an entry is.
    silo.Configure<SiloOptions>(o => o.SiloName = settings.Name);
    if (settings.Redis is null)
    {
        silo.UseLocalhostClustering(settings.SiloPort, settings.GatewayPort, serviceId: settings.ServiceId, clusterId: settings.ClusterId);
    }
    else
    {
        silo.UseRedisClustering(settings.Redis)
            .Configure<ClusterOptions>(o =>
            {
                o.ClusterId = settings.ClusterId;
                o.ServiceId = settings.ServiceId;
            })
            // Listening on every address when advertising a routable one lets a client on this host still use
            // localhost:gateway (the runner's --cluster does), while other hosts use the advertised address.
            .ConfigureEndpoints(settings.AdvertisedAddress, settings.SiloPort, settings.GatewayPort,
                listenOnAnyHostAddress: !System.Net.IPAddress.IsLoopback(settings.AdvertisedAddress));
    }

    silo.ConfigureBenchmarks(builder.Configuration, durability);
    if (settings.Dashboard)
    {
        silo.AddDashboard();
        silo.AddSnapperDashboardCounters();
    }
});

// The live view: one HTTP port for the dashboard and the Prometheus endpoint; none at all when it is off.
if (settings.WebPort is { } webPort)
{
    builder.WebHost.ConfigureKestrel(kestrel => kestrel.Listen(
        System.Net.IPAddress.IsLoopback(settings.AdvertisedAddress) ? System.Net.IPAddress.Loopback : System.Net.IPAddress.Any, webPort));
}
else
{
    builder.Services.AddSingleton<Microsoft.AspNetCore.Hosting.Server.IServer, NoHttpServer>();
}

if (settings.Metrics != MetricsExport.None)
{
    builder.Services.AddOpenTelemetry().WithMetrics(metrics =>
    {
        // Snapper's meter (commits and aborts by mode and reason, batch sizes, commit lag, log bytes and flushes,
        // recovery and checkpoint times) and Orleans' own.
        metrics.AddMeter(Snapper.Diagnostics.SnapperMeter.Name, "Microsoft.Orleans");

        // The copies of Snapper's figures made for the dashboard (AddSnapperDashboardCounters) share Orleans' meter
        // name; exported, they would repeat the "Snapper" meter's instruments under the same names.
        metrics.AddView(instrument => instrument.Meter.Name == "Microsoft.Orleans" && instrument.Name.StartsWith("snapper.", StringComparison.Ordinal)
            ? MetricStreamConfiguration.Drop
            : null);
        if (settings.Metrics.HasFlag(MetricsExport.Prometheus))
        {
            metrics.AddPrometheusExporter();
        }

        if (settings.Metrics.HasFlag(MetricsExport.Otlp))
        {
            metrics.AddOtlpExporter(otlp =>
            {
                if (settings.OtlpEndpoint is { } endpoint)
                {
                    otlp.Endpoint = endpoint;
                }
            });
        }
    });
}

// Listening from before the start, so that the counters cover everything the silo does.
await using var stats = settings.StatsFile is null ? null : new SiloStats(settings.StatsFile);
await using var host = builder.Build();
if (settings.Dashboard)
{
    host.MapOrleansDashboard();
}

if (settings.Metrics.HasFlag(MetricsExport.Prometheus))
{
    host.MapPrometheusScrapingEndpoint(SiloSettings.PrometheusPath);
}

var logger = host.Services.GetRequiredService<ILoggerFactory>().CreateLogger("Snapper.Silo");
var description = $"{settings.Name} (role {settings.Role}, {settings.Workers} worker(s)), silo port {settings.SiloPort}, gateway port {settings.GatewayPort}, " +
    $"advertised {settings.AdvertisedAddress}, clustering {(settings.Redis is null ? "localhost" : "redis " + settings.Redis)}, " +
    $"cluster {settings.ClusterId}/{settings.ServiceId}, data {settings.DataFolder ?? "in memory"}, log {settings.LogFile}, " +
    $"{(settings.StatsFile is null ? "" : $"stats {settings.StatsFile}, ")}{LiveView(settings)}pid {Environment.ProcessId}";
logger.LogInformation("Snapper silo starting: {Description}", description);
try
{
    await host.StartAsync();
}
catch (OptionsValidationException e)
{
    // Snapper's own settings (--Snapper:...) rejected: one line per problem, without a stack trace.
    logger.LogCritical("Snapper silo could not start, settings rejected: {Failures}", string.Join(" ", e.Failures));
    Console.Error.WriteLine($"Snapper silo {settings.Name}: settings rejected: {string.Join(" ", e.Failures)}");
    await Log.CloseAndFlushAsync();
    return 2;
}
catch (Exception e)
{
    logger.LogCritical(e, "Snapper silo could not start");
    Console.Error.WriteLine($"Snapper silo {settings.Name} could not start: {e.GetType().Name}: {e.Message} (details in {settings.LogFile})");
    await Log.CloseAndFlushAsync();
    return 1;
}

// The deploy scripts wait for this line in the log file to know the silo is up.
logger.LogInformation("Snapper silo started: {Description}", description);
Console.WriteLine($"Snapper silo started: {description}. Ctrl+C or SIGTERM stops it.");
await host.WaitForShutdownAsync();
logger.LogInformation("Snapper silo stopped: {Name}", settings.Name);
await Log.CloseAndFlushAsync();
return 0;

static string LiveView(SiloSettings settings)
{
    if (settings.WebPort is not { } port)
    {
        return "";
    }

    var root = $"http://{(System.Net.IPAddress.IsLoopback(settings.AdvertisedAddress) ? "localhost" : settings.AdvertisedAddress.ToString())}:{port}";
    var parts = new List<string>();
    if (settings.Dashboard)
    {
        parts.Add($"dashboard {root}/");
    }

    if (settings.Metrics.HasFlag(MetricsExport.Prometheus))
    {
        parts.Add($"metrics {root}{SiloSettings.PrometheusPath}");
    }

    return parts.Count == 0 ? "" : string.Join(", ", parts) + ", ";
}
