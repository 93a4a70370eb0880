using System.CommandLine;
using System.Diagnostics;
using System.Globalization;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Snapper;

// An operator's view of a SnapperD cluster through a gateway: which workers are up and what they host, and moving
// actors between them while transactions keep running (ActorMigration in Snapper.Abstractions does the work).
var gatewaysOption = new Option<string>("--gateways")
{
    Description = "Comma-separated gateway ports on localhost (a worker's, or the master's)",
    Required = true,
    Recursive = true,
};

var parallelOption = new Option<int>("--parallel") { Description = "Migrations under way at once", DefaultValueFactory = _ => ActorMigration.Helpers };
var toOption = new Option<string?>("--workers") { Description = "The workers to spread the actors over (default: every worker that is up), e.g. 0,1,2,3" };
var actorArgument = new Argument<string>("actor") { Description = "The actor's grain id, type/key as Orleans prints it (e.g. smallbank-account/42)" };
var workerArgument = new Argument<int>("worker") { Description = "The worker to move it to" };

var workers = new Command("workers", "The workers that are up and how many transactional actors each hosts.");
var rebalance = new Command("rebalance", "Spreads the actors evenly over the workers that are up (or --workers), migrating them live; exit code 1 if a move failed.")
{
    parallelOption, toOption,
};
var migrate = new Command("migrate", "Moves one actor to a worker; returns once it serves from there.") { actorArgument, workerArgument };
var root = new RootCommand("Snapper cluster administration: workers, rebalance, migrate.") { gatewaysOption, workers, rebalance, migrate };

workers.SetAction((parse, cancellation) => WithClientAsync(parse.GetValue(gatewaysOption)!, async grains =>
{
    var up = await grains.WorkersUpAsync();
    Console.WriteLine($"workers up: {(up.Count == 0 ? "none" : string.Join(", ", up))}");
    foreach (var worker in up)
    {
        Console.WriteLine($"worker {worker}: {(await grains.ActorsOnAsync(worker)).Count} actors");
    }

    return 0;
}));

rebalance.SetAction((parse, cancellation) => WithClientAsync(parse.GetValue(gatewaysOption)!, async grains =>
{
    var parallel = parse.GetValue(parallelOption);
    if (parallel < 1)
    {
        Console.Error.WriteLine("--parallel must be at least 1.");
        return 2;
    }

    IReadOnlyList<int>? targets = null;
    if (parse.GetValue(toOption) is { } list)
    {
        targets = [.. list.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).Select(w => int.Parse(w, CultureInfo.InvariantCulture))];
    }

    var started = Stopwatch.StartNew();
    var moved = 0;
    using var progress = new Timer(_ => Console.WriteLine($"  {Volatile.Read(ref moved)} moved after {started.Elapsed.TotalSeconds:0.0} s"), null, 2000, 2000);
    var result = await grains.RebalanceAsync(new RebalanceOptions
    {
        Parallelism = parallel,
        Workers = targets,
        OnMoved = _ => Interlocked.Increment(ref moved),
    }, cancellation);
    await progress.DisposeAsync();

    var plan = result.Planned.GroupBy(m => (m.From, m.To)).OrderBy(g => g.Key).Select(g => $"{g.Count()} from worker {g.Key.From} to {g.Key.To}");
    Console.WriteLine(result.Planned.Count == 0 ? "balanced already: nothing to move" : $"planned {result.Planned.Count} moves: {string.Join(", ", plan)}");
    if (result.Moved.Count > 0)
    {
        var times = result.Moved.Select(m => m.Elapsed.TotalMilliseconds).Order().ToArray();
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"moved {result.Moved.Count} actors in {started.Elapsed.TotalSeconds:0.0} s; migration time p50 {Percentile(times, 0.5):0.0} ms, p99 {Percentile(times, 0.99):0.0} ms, max {times[^1]:0.0} ms"));
    }

    foreach (var failure in result.Failed.GroupBy(f => f.Reason))
    {
        Console.WriteLine($"failed {failure.Count()} ({failure.Key}), e.g. {failure.First().Message}");
    }

    return result.Failed.Count == 0 ? 0 : 1;
}));

migrate.SetAction((parse, cancellation) => WithClientAsync(parse.GetValue(gatewaysOption)!, async grains =>
{
    var actor = GrainId.Parse(parse.GetValue(actorArgument)!);
    var worker = parse.GetValue(workerArgument);
    var started = Stopwatch.StartNew();
    try
    {
        await grains.MigrateAsync(actor, worker);
    }
    catch (MigrationException refused)
    {
        Console.Error.WriteLine(refused.Message);
        return 1;
    }

    Console.WriteLine($"{actor} serves from worker {worker} ({started.Elapsed.TotalMilliseconds:0.0} ms)");
    return 0;
}));

return await root.Parse(args).InvokeAsync();

static double Percentile(double[] sorted, double p) => sorted[Math.Min(sorted.Length - 1, (int)Math.Ceiling(p * sorted.Length) - 1)];

// Connects a client to the gateways, runs the command, and disconnects; a cluster that cannot be reached is exit code 2.
static async Task<int> WithClientAsync(string gateways, Func<IGrainFactory, Task<int>> command)
{
    int[] ports;
    try
    {
        ports = [.. gateways.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).Select(p => int.Parse(p, CultureInfo.InvariantCulture))];
    }
    catch (FormatException)
    {
        Console.Error.WriteLine($"--gateways takes port numbers separated by commas (was '{gateways}').");
        return 2;
    }

    var builder = Host.CreateApplicationBuilder();
    builder.Logging.ClearProviders().AddConsole().SetMinimumLevel(LogLevel.Error);
    builder.UseOrleansClient(client => client.UseLocalhostClustering(ports).AddSnapperClient());
    using var host = builder.Build();
    try
    {
        await host.StartAsync();
    }
    catch (Exception exception)
    {
        Console.Error.WriteLine($"Could not connect to the cluster at gateway(s) {gateways}: {exception.Message}");
        return 2;
    }

    try
    {
        return await command(host.Services.GetRequiredService<IGrainFactory>());
    }
    finally
    {
        await host.StopAsync();
    }
}
