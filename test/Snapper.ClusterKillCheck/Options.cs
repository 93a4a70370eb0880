using System.Globalization;

namespace Snapper.ClusterKillCheck;

/// <summary>The client's settings, from its command line (see <see cref="Usage"/>).</summary>
internal sealed record Options(
    int[] Gateways,
    int Workers,
    string Dir,
    int AccountsPerWorker,
    int Concurrency,
    int Seed,
    TimeSpan MaxLoad,
    TimeSpan ResponseTimeout,
    TimeSpan ReadTimeout,
    long FirstAccount,
    int Migrations)
{
    public const string Usage = """
        usage: Snapper.ClusterKillCheck --gateways P1,P2,... --workers N --dir DIR [options]
          --gateways LIST        the workers' gateway ports on localhost; the client fails over between them
          --workers N            workers in the cluster (placement is the account id's hash modulo N)
          --dir DIR              run folder: the script writes 'phase' and 'stop' there, the client 'progress',
                                 ops.csv, states.csv, violations.txt and client.log (Orleans' log)
          --accounts-per-worker  accounts on each worker (default 16)
          --concurrency N        transfers in flight (default 24)
          --seed N               random seed of the load (default 1)
          --max-load S           stop the load after S seconds even without a stop file (default 900)
          --response-timeout S   Orleans' response timeout: how long a call cut off by a kill can hang (default 20)
          --read-timeout S       how long the final read may keep failing before the check gives up (default 90)
          --first-account ID     accounts are picked from this id up (default 1)
          --migrations N         loops moving random accounts to other workers meanwhile (live migration; default 0);
                                 local and global transfers are then named by where their accounts started
        exit code: 0 no violation, 1 violations, 2 the check could not be made, 3 bad arguments
        """;

    public static Options Parse(string[] args)
    {
        var values = new Dictionary<string, string>(StringComparer.Ordinal);
        for (var i = 0; i < args.Length; i += 2)
        {
            if (!args[i].StartsWith("--", StringComparison.Ordinal) || i + 1 >= args.Length)
            {
                throw new ArgumentException($"expected --name value, found '{args[i]}'");
            }

            values[args[i][2..]] = args[i + 1];
        }

        string Take(string name, string? fallback = null)
        {
            if (values.Remove(name, out var value))
            {
                return value;
            }

            return fallback ?? throw new ArgumentException($"--{name} is required");
        }

        int Number(string name, string? fallback = null, int min = 1)
        {
            var text = Take(name, fallback);
            return int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out var n) && n >= min
                ? n
                : throw new ArgumentException($"--{name} must be a number of at least {min} (was '{text}')");
        }

        var options = new Options(
            Take("gateways").Split(',').Select(p => int.TryParse(p, out var port) && port is > 0 and < 65536 ? port : throw new ArgumentException($"--gateways: '{p}' is not a port")).ToArray(),
            Number("workers", min: 2),
            Path.GetFullPath(Take("dir")),
            Number("accounts-per-worker", "16", min: 4),
            Number("concurrency", "24"),
            Number("seed", "1", min: 0),
            TimeSpan.FromSeconds(Number("max-load", "900")),
            TimeSpan.FromSeconds(Number("response-timeout", "20")),
            TimeSpan.FromSeconds(Number("read-timeout", "90")),
            Number("first-account", "1"),
            Number("migrations", "0", min: 0));
        return values.Count == 0 ? options : throw new ArgumentException($"unknown option --{values.Keys.First()}");
    }
}
