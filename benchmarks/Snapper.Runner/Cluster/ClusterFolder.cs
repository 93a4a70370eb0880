using System.Globalization;

namespace Snapper.Runner.Cluster;

/// <summary>
/// A cluster deploy/cluster-start.sh started, read from its folder (the script's <c>--data</c>): the workers from
/// <c>run/cluster.env</c>, and per silo <c>run/NAME.pid</c>, <c>run/NAME.info</c> (its gateway) and
/// <c>run/NAME.stats</c> (its Snapper counters, which the silo rewrites several times a second).
/// </summary>
public sealed class ClusterFolder
{
    private ClusterFolder(string path, int workers, IReadOnlyList<string> silos)
    {
        Folder = path;
        RunFolder = Path.Combine(path, "run");
        Workers = workers;
        Silos = silos;
    }

    /// <summary>The cluster's folder, as a full path.</summary>
    public string Folder { get; }

    /// <summary>The folder's <c>run/</c> subfolder, where the start script records the silos.</summary>
    public string RunFolder { get; }

    /// <summary>Workers the cluster was started with.</summary>
    public int Workers { get; }

    /// <summary>The silos recorded here (master, worker-0, ...), master first.</summary>
    public IReadOnlyList<string> Silos { get; }

    /// <summary>Reads the folder; throws <see cref="ArgumentException"/> if no cluster was started there.</summary>
    public static ClusterFolder Read(string path)
    {
        var full = Path.GetFullPath(path);
        var env = Path.Combine(full, "run", "cluster.env");
        if (!File.Exists(env))
        {
            throw new ArgumentException($"--cluster-data {path}: no {env}; give the folder passed to deploy/cluster-start.sh --data.");
        }

        var workersText = KeyValues(env, '=').GetValueOrDefault("cluster_workers");
        if (!int.TryParse(workersText, NumberStyles.Integer, CultureInfo.InvariantCulture, out var workers) || workers < 1)
        {
            throw new ArgumentException($"{env} has no cluster_workers number (was '{workersText}').");
        }

        // The silos started on this host, as the pid files name them (another host's share has none here).
        var silos = Directory.EnumerateFiles(Path.Combine(full, "run"), "*.pid")
            .Select(f => Path.GetFileNameWithoutExtension(f))
            .Where(n => n != "redis")
            .OrderBy(n => n == "master" ? "" : n, StringComparer.Ordinal)
            .ToArray();
        return new ClusterFolder(full, workers, silos);
    }

    /// <summary>The first worker's gateway port here, or null when no worker runs on this host.</summary>
    public int? FirstWorkerGateway() =>
        Silos.Where(s => s.StartsWith("worker-", StringComparison.Ordinal))
            .Select(s => Info(s).GetValueOrDefault("gateway"))
            .Select(g => int.TryParse(g, NumberStyles.Integer, CultureInfo.InvariantCulture, out var port) ? port : (int?)null)
            .FirstOrDefault(p => p is not null);

    /// <summary>The silo's pid as recorded now (a restarted silo has a new one), or null.</summary>
    public int? Pid(string silo) =>
        File.Exists(PidFile(silo)) && int.TryParse(File.ReadAllText(PidFile(silo)).Trim(), NumberStyles.Integer, CultureInfo.InvariantCulture, out var pid) ? pid : null;

    /// <summary>The silo's counters as it last wrote them (a counter not yet counted is absent); null if it writes none (started without --stats).</summary>
    public IReadOnlyDictionary<string, long>? Stats(string silo)
    {
        var path = Path.Combine(RunFolder, silo + ".stats");
        if (!File.Exists(path))
        {
            return null;
        }

        return KeyValues(path, '=')
            .Where(kv => long.TryParse(kv.Value, NumberStyles.Integer, CultureInfo.InvariantCulture, out _))
            .ToDictionary(kv => kv.Key, kv => long.Parse(kv.Value, CultureInfo.InvariantCulture), StringComparer.Ordinal);
    }

    private string PidFile(string silo) => Path.Combine(RunFolder, silo + ".pid");

    private Dictionary<string, string> Info(string silo)
    {
        var path = Path.Combine(RunFolder, silo + ".info");
        return File.Exists(path) ? KeyValues(path, '=') : new Dictionary<string, string>();
    }

    /// <summary>The <c>key=value</c> lines of a file; values as written (cluster.env's are shell-quoted, the ones read here need no unquoting).</summary>
    private static Dictionary<string, string> KeyValues(string path, char separator) =>
        File.ReadAllLines(path)
            .Select(line => line.Split(separator, 2))
            .Where(kv => kv.Length == 2)
            .GroupBy(kv => kv[0].Trim(), StringComparer.Ordinal)
            .ToDictionary(g => g.Key, g => g.Last()[1].Trim(), StringComparer.Ordinal);
}
