using System.Globalization;
using System.Net;
using System.Net.Sockets;
using Microsoft.Extensions.Configuration;
using Orleans.Configuration;
using Snapper.Hosting;

namespace Snapper.Silo;

/// <summary>A setting of the stand-alone silo that is missing, malformed or contradicts another; the message names it.</summary>
public sealed class SiloConfigurationException(string message) : Exception(message);

/// <summary>
/// Where and how this silo runs, read from configuration (the "Silo" section, the role from the "Snapper" section) with
/// the defaults that let a master and its workers share one machine: each role gets its own ports, data folder and log.
/// </summary>
/// <param name="Role">Embedded (one silo, localhost clustering), master or worker.</param>
/// <param name="WorkerIndex">The worker's number; 0 on other roles.</param>
/// <param name="Workers">Workers in the cluster; 1 for an embedded silo.</param>
/// <param name="Name">"embedded", "master" or "worker-K": the silo's name in logs and default paths.</param>
/// <param name="SiloPort">Port for silo-to-silo traffic; unique per silo on a host.</param>
/// <param name="GatewayPort">Port clients connect to; unique per silo on a host.</param>
/// <param name="Redis">Redis address holding the membership table, or null for localhost clustering.</param>
/// <param name="AdvertisedAddress">The address other silos and clients reach this silo at (with Redis clustering).</param>
/// <param name="ClusterId">Orleans cluster id: silos and clients of one cluster share it.</param>
/// <param name="ServiceId">Orleans service id: silos and clients of one cluster share it.</param>
/// <param name="DataFolder">Absolute path of the write-ahead log and Orleans Transactions' files, or null (in memory).</param>
/// <param name="LogFile">Absolute path of this silo's log file.</param>
/// <param name="StatsFile">Absolute path of the file <see cref="SiloStats"/> keeps this silo's counters in, or null (none).</param>
/// <param name="WebPort">HTTP port of the live view (the dashboard and the Prometheus endpoint), or null (no HTTP server).</param>
/// <param name="Dashboard">Whether the silo hosts Orleans' dashboard, with Snapper's figures on its counters pages.</param>
/// <param name="Metrics">How Snapper's and Orleans' meters are exported with OpenTelemetry.</param>
/// <param name="OtlpEndpoint">Where OTLP exports go, or null for OpenTelemetry's default (its environment variables, else localhost:4317).</param>
public sealed record SiloSettings(
    SiloRole Role,
    int WorkerIndex,
    int Workers,
    string Name,
    int SiloPort,
    int GatewayPort,
    string? Redis,
    IPAddress AdvertisedAddress,
    string ClusterId,
    string ServiceId,
    string? DataFolder,
    string LogFile,
    string? StatsFile,
    int? WebPort,
    bool Dashboard,
    MetricsExport Metrics,
    Uri? OtlpEndpoint)
{
    /// <summary>First silo port: the embedded silo or master gets it, worker K gets this plus 1 + K.</summary>
    public const int BaseSiloPort = 11111;

    /// <summary>First gateway port: the embedded silo or master gets it, worker K gets this plus 1 + K.</summary>
    public const int BaseGatewayPort = 30000;

    /// <summary>First HTTP port of the live view: the embedded silo or master gets it, worker K gets this plus 1 + K.</summary>
    public const int BaseWebPort = 8080;

    /// <summary>The path of the Prometheus scraping endpoint on the live view's port.</summary>
    public const string PrometheusPath = "/metrics";

    /// <summary>
    /// Orleans' own default cluster and service ids (<see cref="ClusterOptions.DefaultClusterId"/> and
    /// <see cref="ClusterOptions.DefaultServiceId"/>, both "default"). The
    /// runner's <c>--cluster PORT</c> client connects with Orleans' localhost defaults, which keep these ids (a gateway
    /// refuses a client whose cluster id differs), so a cluster started with them is one the runner can drive.
    /// </summary>
    public const string DefaultClusterId = ClusterOptions.DefaultClusterId;

    /// <inheritdoc cref="DefaultClusterId"/>
    public const string DefaultServiceId = ClusterOptions.DefaultServiceId;

    /// <summary>Command-line flags short enough to type, mapped onto the configuration keys they set.</summary>
    public static IDictionary<string, string> SwitchMappings { get; } = new Dictionary<string, string>
    {
        ["--role"] = "Snapper:Role",
        ["--workers"] = "Snapper:Workers",
        ["--worker-index"] = "Snapper:WorkerIndex",
        ["--redis"] = "Silo:Redis",
        ["--silo-port"] = "Silo:SiloPort",
        ["--gateway-port"] = "Silo:GatewayPort",
        ["--advertise"] = "Silo:AdvertisedAddress",
        ["--cluster-id"] = "Silo:ClusterId",
        ["--service-id"] = "Silo:ServiceId",
        ["--data"] = "Silo:DataFolder",
        ["--log"] = "Silo:LogFile",
        ["--stats"] = "Silo:StatsFile",
        ["--web-port"] = "Silo:WebPort",
        ["--dashboard"] = "Silo:Dashboard",
        ["--metrics"] = "Silo:Metrics",
        ["--otlp-endpoint"] = "Silo:OtlpEndpoint",
    };

    /// <summary>Reads and checks the settings; a bad one throws <see cref="SiloConfigurationException"/>.</summary>
    public static SiloSettings Read(IConfiguration configuration)
    {
        var silo = configuration.GetSection("Silo");
        var snapper = configuration.GetSection(SnapperOptions.SectionName);

        var roleText = snapper["Role"];
        var role = SiloRole.Embedded;
        if (!string.IsNullOrWhiteSpace(roleText)
            && (!Enum.TryParse(roleText, ignoreCase: true, out role) || !Enum.IsDefined(role)))
        {
            throw new SiloConfigurationException($"--role (Snapper:Role) '{roleText}' is not a role; use embedded, master or worker.");
        }

        var workers = Integer(snapper, "Workers", "--workers", role == SiloRole.Embedded ? 1 : null);
        var workerIndex = role == SiloRole.Worker ? Integer(snapper, "WorkerIndex", "--worker-index", null) : 0;
        if (workers < 1)
        {
            throw new SiloConfigurationException($"--workers (Snapper:Workers) must be at least 1 (was {workers}).");
        }

        if (workerIndex < 0 || workerIndex >= workers)
        {
            throw new SiloConfigurationException($"--worker-index (Snapper:WorkerIndex) must be from 0 to {workers - 1} with --workers {workers} (was {workerIndex}).");
        }

        var name = role switch
        {
            SiloRole.Master => "master",
            SiloRole.Worker => $"worker-{workerIndex}",
            _ => "embedded",
        };

        // Master and embedded silo take the first ports and each worker the next ones, so the default ports of one
        // cluster's silos never collide on a host (a silo's endpoint is its address and silo port).
        var slot = role == SiloRole.Worker ? 1 + workerIndex : 0;
        var siloPort = Port(silo, "SiloPort", "--silo-port", BaseSiloPort + slot);
        var gatewayPort = Port(silo, "GatewayPort", "--gateway-port", BaseGatewayPort + slot);
        if (siloPort == gatewayPort)
        {
            throw new SiloConfigurationException($"--silo-port and --gateway-port must differ (both {siloPort}).");
        }

        var redis = silo["Redis"] is { Length: > 0 } r ? r.Trim() : null;
        if (role != SiloRole.Embedded && redis is null)
        {
            // Localhost clustering keeps membership inside one silo: a master and its workers are separate processes
            // (or hosts) and must share a membership table to find each other.
            throw new SiloConfigurationException($"A {name} needs --redis host:port (Silo:Redis), the membership table the cluster's silos share; only an embedded silo runs with localhost clustering.");
        }

        var advertised = Advertised(silo["AdvertisedAddress"], redis);
        var clusterId = silo["ClusterId"] is { Length: > 0 } c ? c : DefaultClusterId;
        var serviceId = silo["ServiceId"] is { Length: > 0 } s ? s : DefaultServiceId;

        var defaultData = role == SiloRole.Embedded ? Path.Combine("data", $"silo-{siloPort}") : Path.Combine("data", "cluster", name);
        var data = silo["DataFolder"] is { Length: > 0 } d ? d : defaultData;
        string? dataFolder = data == "off" ? null : Path.GetFullPath(data);
        var logFile = Path.GetFullPath(silo["LogFile"] is { Length: > 0 } l ? l
            : dataFolder is null ? Path.Combine("data", "logs", $"{name}-{siloPort}.log") : Path.Combine(dataFolder, "silo.log"));

        var statsFile = silo["StatsFile"] is { Length: > 0 } st ? Path.GetFullPath(st) : null;

        var webPort = silo["WebPort"] is "off" ? (int?)null : Port(silo, "WebPort", "--web-port", BaseWebPort + slot);
        if (webPort == siloPort || webPort == gatewayPort)
        {
            throw new SiloConfigurationException($"--web-port must differ from --silo-port and --gateway-port (all {webPort}).");
        }

        var dashboard = silo["Dashboard"] switch
        {
            null or "" or "on" => webPort is not null,
            "off" => false,
            var other => throw new SiloConfigurationException($"--dashboard (Silo:Dashboard) '{other}' is neither on nor off."),
        };
        var metrics = ReadMetrics(silo["Metrics"], webPort);
        Uri? otlp = null;
        if (silo["OtlpEndpoint"] is { Length: > 0 } endpoint)
        {
            if (!Uri.TryCreate(endpoint, UriKind.Absolute, out otlp) || otlp.Scheme is not ("http" or "https"))
            {
                throw new SiloConfigurationException($"--otlp-endpoint (Silo:OtlpEndpoint) '{endpoint}' is not an http or https address.");
            }

            if (!metrics.HasFlag(MetricsExport.Otlp))
            {
                throw new SiloConfigurationException("--otlp-endpoint is given but --metrics does not include otlp.");
            }
        }

        return new SiloSettings(role, workerIndex, workers, name, siloPort, gatewayPort, redis, advertised, clusterId, serviceId, dataFolder, logFile, statsFile,
            webPort, dashboard, metrics, otlp);
    }

    /// <summary>
    /// The exports named by <c>--metrics</c>: a comma-separated list of prometheus and otlp, or off. Without the flag,
    /// Prometheus when the silo has an HTTP port (a scrape endpoint costs nothing until scraped), else none.
    /// </summary>
    private static MetricsExport ReadMetrics(string? text, int? webPort)
    {
        if (string.IsNullOrWhiteSpace(text))
        {
            return webPort is null ? MetricsExport.None : MetricsExport.Prometheus;
        }

        var exports = MetricsExport.None;
        foreach (var part in text.Split(',', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries))
        {
            exports |= part.ToLowerInvariant() switch
            {
                "prometheus" => MetricsExport.Prometheus,
                "otlp" => MetricsExport.Otlp,
                "off" => MetricsExport.None,
                _ => throw new SiloConfigurationException($"--metrics (Silo:Metrics) '{part}' is not an export; use prometheus, otlp (or both, comma-separated) or off."),
            };
        }

        if (exports.HasFlag(MetricsExport.Prometheus) && webPort is null)
        {
            throw new SiloConfigurationException("--metrics prometheus needs the HTTP port that --web-port off turns off.");
        }

        return exports;
    }

    /// <summary>
    /// The address published in the membership table. Given explicitly on a multi-host cluster; otherwise loopback when
    /// there is no Redis or it is on this host (a one-machine cluster), else this host's first IPv4 address.
    /// </summary>
    private static IPAddress Advertised(string? given, string? redis)
    {
        if (given is { Length: > 0 })
        {
            if (IPAddress.TryParse(given, out var parsed))
            {
                return parsed;
            }

            try
            {
                return Dns.GetHostAddresses(given).FirstOrDefault(a => a.AddressFamily == AddressFamily.InterNetwork)
                    ?? throw new SiloConfigurationException($"--advertise (Silo:AdvertisedAddress) '{given}' has no IPv4 address.");
            }
            catch (SocketException e)
            {
                throw new SiloConfigurationException($"--advertise (Silo:AdvertisedAddress) '{given}' does not resolve: {e.Message}");
            }
        }

        if (redis is null || IsLocal(redis))
        {
            return IPAddress.Loopback;
        }

        return Dns.GetHostAddresses(Dns.GetHostName()).FirstOrDefault(a => a.AddressFamily == AddressFamily.InterNetwork && !IPAddress.IsLoopback(a))
            ?? throw new SiloConfigurationException($"Redis at {redis} is on another host, but this host has no non-loopback IPv4 address to advertise; give one with --advertise.");
    }

    /// <summary>Whether a StackExchange.Redis configuration string names only this host (its first endpoint is what counts).</summary>
    private static bool IsLocal(string redis)
    {
        var endpoint = redis.Split(',')[0].Trim();
        var host = endpoint.StartsWith('[') ? endpoint[1..endpoint.IndexOf(']')]
            : endpoint.Count(ch => ch == ':') > 1 ? endpoint // a bare IPv6 address
            : endpoint.Split(':')[0];
        return host is "localhost" or "" || (IPAddress.TryParse(host, out var address) && IPAddress.IsLoopback(address));
    }

    private static int Integer(IConfiguration section, string key, string flag, int? fallback)
    {
        var text = section[key];
        if (string.IsNullOrWhiteSpace(text))
        {
            return fallback ?? throw new SiloConfigurationException($"{flag} ({SectionPath(section)}:{key}) is required for this role.");
        }

        return int.TryParse(text, NumberStyles.Integer, CultureInfo.InvariantCulture, out var value)
            ? value
            : throw new SiloConfigurationException($"{flag} ({SectionPath(section)}:{key}) '{text}' is not a whole number.");
    }

    private static int Port(IConfiguration section, string key, string flag, int fallback)
    {
        var port = Integer(section, key, flag, fallback);
        return port is > 0 and <= 65535
            ? port
            : throw new SiloConfigurationException($"{flag} ({SectionPath(section)}:{key}) must be a port from 1 to 65535 (was {port}).");
    }

    private static string SectionPath(IConfiguration section) => section is IConfigurationSection s ? s.Path : "";
}

/// <summary>How the silo exports its meters ("Snapper" and Orleans' own) with OpenTelemetry.</summary>
[Flags]
public enum MetricsExport
{
    /// <summary>No export; dotnet-counters still reads the meters of the running process.</summary>
    None = 0,

    /// <summary>A Prometheus scraping endpoint at <see cref="SiloSettings.PrometheusPath"/> on the silo's HTTP port.</summary>
    Prometheus = 1,

    /// <summary>OTLP pushed to a collector.</summary>
    Otlp = 2,
}
