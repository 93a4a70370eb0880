using System.CommandLine;
using System.Globalization;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Serilog;
using Snapper.Runner.Cluster;
using Snapper.Runner.Experiment;
using Snapper.Runner.Hosting;
using Snapper.Runner.Output;
using Snapper.Workloads;
using Snapper.Workloads.SmallBank;
using Snapper.Workloads.Tpcc;

var workloadOption = new Option<string>("--workload") { Description = "smallbank, tpcc, kvbank or marketplace", DefaultValueFactory = _ => "smallbank" };
var modesOption = new Option<string>("--modes") { Description = "Comma-separated modes (NT,ACT,PACT,Hybrid,OrleansTxn); default: all the workload supports" };
var actorsOption = new Option<int?>("--actors") { Description = "SmallBank accounts (default 10000; 1000 with --quick)" };
var txnSizeOption = new Option<string>("--txnsize") { Description = "Actors per transaction; a comma-separated list sweeps it", DefaultValueFactory = _ => "4" };
var zipfOption = new Option<string>("--zipf") { Description = "Zipf constants; a comma-separated list sweeps them (e.g. 0,0.9,1,1.25,1.5)", DefaultValueFactory = _ => "0" };
var hotOption = new Option<string?>("--hot") { Description = "Hot-set fractions instead of Zipf (90% of accesses go to the hot set), e.g. 0.01,0.001" };
var pactPercentOption = new Option<double>("--pact-percent") { Description = "Share of PACTs in Hybrid mode, in percent", DefaultValueFactory = _ => 90 };
var orleansTxnLocksOption = new Option<OrleansTxnLockOrder>("--orleans-txn-locks")
{
    Description = "smallbank, tpcc, marketplace: how the Orleans Transactions baseline takes its actors' locks, parallel (as the other " +
        "modes call them; deadlocks wait for Orleans' 10-s transaction timeout), ascending (one actor at a time in one global order: no " +
        "deadlock) or auto (parallel with one transaction in flight, where nothing can deadlock, else ascending)",
    DefaultValueFactory = _ => OrleansTxnLocks.Default,
};
var warehousesOption = new Option<string?>("--warehouses") { Description = "TPC-C warehouses; a comma-separated list sweeps them (default 2; 1 with --quick)" };
var orderPartitionsOption = new Option<string>("--order-partitions")
{
    Description = "TPC-C order actors per district: 2 = low skew, 1 = high skew; a list sweeps it",
    DefaultValueFactory = _ => "2",
};
var actorSizeOption = new Option<string?>("--actor-size") { Description = "kvbank: accounts (keys) per branch actor; a list sweeps it (default 100,1000; 100 with --quick)" };
var statesOption = new Option<string>("--states")
{
    Description = "kvbank: how branches keep accounts, opaque (one state, logged whole) and/or kv (a key-value actor, changes logged)",
    DefaultValueFactory = _ => "opaque,kv",
};
var actorSkewOption = new Option<string>("--actor-skew")
{
    Description = "kvbank, marketplace: share of branches / sellers that are hot (75% of picks); 1 = uniform; a list sweeps it",
    DefaultValueFactory = _ => "1",
};
var keySkewOption = new Option<string>("--key-skew")
{
    Description = "kvbank, marketplace: share of a branch's accounts / a seller's products that are hot (75% of picks); 1 = uniform; a list sweeps it",
    DefaultValueFactory = _ => "1",
};
var concurrencyOption = new Option<string?>("--concurrency")
{
    Description = "kvbank, marketplace: concurrency control of key-value actors, actor and/or key (kvbank default: both, opaque state at actor " +
        "level only; marketplace default actor, a list runs each level on a silo of its own)",
};
var dependenciesOption = new Option<string?>("--dependencies")
{
    Description = "marketplace: who keeps cart prices, stock and seller views, declared (Snapper's dependencies) and/or byhand " +
        "(application code); a list runs each on a silo of its own (default declared)",
};
var repeatOption = new Option<int?>("--repeat")
{
    Description = "Run every cell this many times, interleaving the modes (all of a repetition before the next); the table, " +
        "results.csv and charts give each cell's median with its range, repetitions.csv every run (default 3; 1 with --quick)",
};
var itemsOption = new Option<int?>("--items") { Description = "TPC-C items (default 100000; 10000 with --quick)" };
var pipelineOption = new Option<string[]>("--pipeline")
{
    Description = "Transactions in flight per mode, e.g. --pipeline ACT=32 --pipeline OrleansTxn=1,2,4 (a list sweeps it), or MODE=auto: " +
        "short probes find the pipeline with the highest committed throughput first (the default of the main job, smallbank without --quick)",
    AllowMultipleArgumentsPerToken = true,
};
var epochsOption = new Option<int?>("--epochs") { Description = "Epochs per run including warm-up (default 6)" };
var warmupOption = new Option<int?>("--warmup") { Description = "Warm-up epochs (default 2)" };
var epochSecondsOption = new Option<double?>("--epoch-seconds") { Description = "Epoch length in seconds (default 10)" };
var quickOption = new Option<bool>("--quick") { Description = "Smoke run: 1,000 actors, 3 epochs of 2 s (1 warm-up)" };
var outOption = new Option<string?>("--out") { Description = "Output folder for CSV and charts (default data/results/<workload>-<time>)" };
var dataOption = new Option<string>("--data") { Description = "Data folder (logs, default results)", DefaultValueFactory = _ => "data" };
var clusterOption = new Option<int?>("--cluster") { Description = "Drive a running cluster through the gateway on this localhost port instead of an embedded silo" };
var clusterDataOption = new Option<string?>("--cluster-data")
{
    Description = "The cluster's folder (deploy/cluster-start.sh --data): its workers, its first worker's gateway unless --cluster gives one, " +
        "and each silo's CPU and PACT batches per measured cell (cpu.csv)",
};
var workersOption = new Option<int?>("--workers") { Description = "Workers of the cluster, for --dist-percent (default: read from --cluster-data)" };
var distPercentOption = new Option<string?>("--dist-percent")
{
    Description = "Cluster runs: percent of transactions whose actors span workers, the others on one worker, each worker with its own hot set; " +
        "a comma-separated list sweeps it (e.g. 0,25,50,75,100)",
};
var distLevelOption = new Option<int>("--txn-dist-level") { Description = "Workers a distributed transaction spans (with --dist-percent)", DefaultValueFactory = _ => 2 };
var tagOption = new Option<string[]>("--tag")
{
    Description = "KEY=VALUE added to every row's params, e.g. --tag config=noshortcut, so rows of runs combined later stay apart (a non-numeric value is a chart series)",
    AllowMultipleArgumentsPerToken = true,
};
var replotOption = new Option<string?>("--replot") { Description = "Redraw the charts of an existing results.csv (next to it) and exit; runs nothing" };
var loggingOption = new Option<string>("--logging")
{
    Description = "Durability of the embedded silo; a comma-separated list compares settings, each on a fresh silo: " +
        "fsync (Snapper's log and Orleans Transactions' storage on disk, fsynced, with checkpoints), fsync-nockpt (no checkpoints), " +
        "nofsync (written but not fsynced: experiments only), off (everything in memory)",
    DefaultValueFactory = _ => "fsync",
};
var checkpointOption = new Option<double>("--checkpoint-seconds") { Description = "Checkpoint interval of the settings with checkpoints", DefaultValueFactory = _ => 60 };
var seedOption = new Option<int>("--seed") { Description = "Seed of the client loops", DefaultValueFactory = _ => 1 };
var siloPerModeOption = new Option<bool?>("--silo-per-mode")
{
    Description = "Run every mode of every repetition on a fresh embedded silo (a mode run later in a shared silo ran 10-40 % slower: " +
        "earlier modes' actors and data stay on its heap); default true, except for kvbank and marketplace, whose variants have silos of their own",
};
var minutesOption = new Option<int?>("--minutes")
{
    Description = "Soak instead of epochs: run the modes together on the embedded silo for this many minutes, one point and one --logging " +
        "setting; every minute a row of transactions, memory and the silo's snapper.entries.* gauges (soak.csv, soak.md in --out)",
};
var scaleOutOption = new Option<double?>("--scale-out")
{
    Description = "Scale-out scenario (thesis §4.4.6) on the cluster of --cluster-data, started with --home-workers: the modes run together " +
        "for this many seconds, then the cluster's other workers start (deploy/cluster-start.sh --add), the actors are rebalanced over all " +
        "workers while the load runs, and the load runs this many seconds more; per-second throughput, per-phase latency, migration " +
        "aborts and times (scaleout.csv, phases.csv, scaleout.md, scaleout-throughput.png in --out)",
};
var addSilosOption = new Option<string?>("--add-silos") { Description = "--scale-out: the silos to add, e.g. worker:2,worker:3 (default: the cluster's workers not started)" };
var migrationParallelOption = new Option<int>("--migration-parallel") { Description = "--scale-out: migrations under way at once", DefaultValueFactory = _ => 8 };

var root = new RootCommand("Snapper experiment runner: one workload, several execution modes side by side, CSV and charts.")
{
    workloadOption, modesOption, actorsOption, txnSizeOption, actorSizeOption, statesOption, actorSkewOption, keySkewOption, concurrencyOption, dependenciesOption, repeatOption, zipfOption, hotOption, pactPercentOption, orleansTxnLocksOption, warehousesOption, orderPartitionsOption,
    itemsOption, pipelineOption, epochsOption,
    warmupOption, epochSecondsOption, quickOption, outOption, dataOption, clusterOption, clusterDataOption, workersOption, distPercentOption, distLevelOption,
    tagOption, loggingOption, checkpointOption, seedOption, replotOption, minutesOption, siloPerModeOption, scaleOutOption, addSilosOption, migrationParallelOption,
};

root.SetAction(async (parse, cancellationToken) =>
{
    if (parse.GetValue(replotOption) is { } existing)
    {
        var previous = CsvOutput.Read(existing);
        foreach (var chart in ChartOutput.Write(Path.GetDirectoryName(Path.GetFullPath(existing))!, previous[0].Workload, previous))
        {
            Console.WriteLine($"Wrote {chart}");
        }

        return 0;
    }

    var quick = parse.GetValue(quickOption);
    var workloadName = parse.GetValue(workloadOption)!.ToLowerInvariant();
    var settings = new RunSettings(
        Epochs: parse.GetValue(epochsOption) ?? (quick ? 3 : 6),
        WarmupEpochs: parse.GetValue(warmupOption) ?? (quick ? 1 : 2),
        EpochLength: TimeSpan.FromSeconds(parse.GetValue(epochSecondsOption) ?? (quick ? 2 : 10)),
        Pipelines: ParsePipelines(parse.GetValue(pipelineOption) ?? [],
            // The main job searches each mode's best pipeline: with fsync the best differs by mode and skew tenfold.
            searchByDefault: workloadName == "smallbank" && !quick && parse.GetValue(minutesOption) is null),
        Seed: parse.GetValue(seedOption));
    if (settings.MeasuredEpochs < 1)
    {
        Console.Error.WriteLine("--epochs must exceed --warmup.");
        return 2;
    }

    ClusterFolder? clusterData = null;
    try
    {
        clusterData = parse.GetValue(clusterDataOption) is { } clusterFolder ? ClusterFolder.Read(clusterFolder) : null;
    }
    catch (ArgumentException e)
    {
        Console.Error.WriteLine(e.Message);
        return 2;
    }

    var cluster = parse.GetValue(clusterOption) ?? clusterData?.FirstWorkerGateway();
    if (clusterData is not null && cluster is null)
    {
        Console.Error.WriteLine("--cluster-data: no worker of that cluster runs on this host; give the gateway with --cluster PORT.");
        return 2;
    }

    var spread = parse.GetValue(distPercentOption) is { } distPercents
        ? new WorkerSpread(Doubles(distPercents), parse.GetValue(distLevelOption), parse.GetValue(workersOption) ?? clusterData?.Workers ?? 0)
        : null;
    if (spread is not null && (cluster is null || spread.Workers < 1 || workloadName != "smallbank"))
    {
        Console.Error.WriteLine("--dist-percent needs --cluster, the cluster's workers (--workers N or --cluster-data DIR) and the smallbank workload.");
        return 2;
    }

    if (spread is not null && (spread.Percents.Any(p => p is < 0 or > 100) || (spread.Percents.Any(p => p > 0) && (spread.Level < 2 || spread.Level > spread.Workers))))
    {
        Console.Error.WriteLine($"--dist-percent takes percentages from 0 to 100, and distributed transactions need a --txn-dist-level from 2 to the cluster's {spread.Workers} worker(s) (was {spread.Level}).");
        return 2;
    }

    IReadOnlyList<IWorkload> points = workloadName switch
    {
        "smallbank" => SmallBankPoints(
            parse.GetValue(actorsOption) ?? (quick ? 1_000 : 10_000),
            Ints(parse.GetValue(txnSizeOption)!),
            Doubles(parse.GetValue(zipfOption)!),
            parse.GetValue(hotOption) is { } hot ? Doubles(hot) : null,
            parse.GetValue(pactPercentOption),
            parse.GetValue(orleansTxnLocksOption),
            spread),
        "tpcc" => TpccPoints(
            Ints(parse.GetValue(warehousesOption) ?? (quick ? "1" : "2")),
            Ints(parse.GetValue(orderPartitionsOption)!),
            parse.GetValue(itemsOption) ?? (quick ? 10_000 : 100_000),
            parse.GetValue(orleansTxnLocksOption)),
        "kvbank" => KeyValueBankPoints(
            parse.GetValue(actorsOption) ?? (quick ? 100 : 1_000),
            Ints(parse.GetValue(actorSizeOption) ?? (quick ? "100" : "100,1000")),
            Ints(parse.GetValue(txnSizeOption)!),
            Doubles(parse.GetValue(actorSkewOption)!),
            Doubles(parse.GetValue(keySkewOption)!),
            Names<Snapper.Workloads.KeyValueBank.BranchStateKind>(parse.GetValue(statesOption)!),
            Names<Snapper.ConcurrencyLevel>(parse.GetValue(concurrencyOption) ?? "actor,key")),
        "marketplace" => MarketplacePoints(
            parse.GetValue(actorsOption) ?? (quick ? 1_000 : 2_000),
            Doubles(parse.GetValue(actorSkewOption)!),
            Doubles(parse.GetValue(keySkewOption)!),
            parse.GetValue(orleansTxnLocksOption),
            quick),
        _ => throw new ArgumentException($"Unknown workload '{workloadName}'; use smallbank, tpcc, kvbank or marketplace."),
    };
    var modes = parse.GetValue(modesOption) is { } list
        ? list.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).Select(Enum.Parse<BenchmarkMode>).ToArray()
        : points[0].Modes.ToArray();

    var dataDirectory = Path.GetFullPath(parse.GetValue(dataOption)!);
    var outDirectory = Path.GetFullPath(parse.GetValue(outOption)
        ?? Path.Combine(dataDirectory, "results", $"{workloadName}-{DateTime.UtcNow:yyyyMMdd-HHmmss}"));
    Directory.CreateDirectory(outDirectory);

    RunnerHost.ConfigureLogging(dataDirectory);
    var tags = (parse.GetValue(tagOption) ?? []).Select(Tag).ToArray();
    var usage = clusterData is null ? null : new UsageProbe(clusterData);
    var durabilities = cluster is null
        ? Durabilities(parse.GetValue(loggingOption)!, Path.Combine(dataDirectory, "wal"), TimeSpan.FromSeconds(parse.GetValue(checkpointOption)))
        : [BenchmarkDurability.InMemory with { Name = "cluster" }]; // the cluster's silos decide
    if (parse.GetValue(minutesOption) is { } minutes)
    {
        var soakProblem = SoakProblem(minutes, points.Count, durabilities.Count, cluster, settings, modes,
            parse.GetValue(epochsOption) ?? parse.GetValue(warmupOption) ?? parse.GetValue(epochSecondsOption));
        if (soakProblem is not null)
        {
            Console.Error.WriteLine(soakProblem);
            return 2;
        }

        var soak = new SoakSettings(minutes, modes.ToDictionary(m => m, m => (settings.Pipelines.GetValueOrDefault(m) ?? RunSettings.DefaultPipelines[m])[0]), settings.Seed);
        var exit = await SoakCommand.RunAsync(points[0], modes, durabilities[0], soak, outDirectory, cancellationToken);
        await Log.CloseAndFlushAsync();
        return exit;
    }

    if (parse.GetValue(scaleOutOption) is { } steadySeconds)
    {
        if (clusterData is null || cluster is null || points.Count != 1 || steadySeconds <= 0 || modes.Distinct().Count() != modes.Length)
        {
            Console.Error.WriteLine("--scale-out takes a positive number of seconds, the cluster's folder (--cluster-data), one parameter point and distinct modes.");
            return 2;
        }

        var add = parse.GetValue(addSilosOption)
            ?? string.Join(',', Enumerable.Range(0, clusterData.Workers).Where(w => !clusterData.Silos.Contains($"worker-{w}")).Select(w => $"worker:{w}"));
        if (add.Length == 0)
        {
            Console.Error.WriteLine("--scale-out: every worker of the cluster already runs; start it with --home-workers, or name the silos to add with --add-silos.");
            return 2;
        }

        var scaleOut = new Snapper.Runner.ScaleOut.ScaleOutSettings(
            TimeSpan.FromSeconds(steadySeconds),
            modes.ToDictionary(m => m, m => (settings.Pipelines.GetValueOrDefault(m) ?? RunSettings.DefaultPipelines[m])[0]),
            settings.Seed, clusterData.Folder, add, parse.GetValue(migrationParallelOption));
        var exit = await Snapper.Runner.ScaleOut.ScaleOutCommand.RunAsync(points[0], modes, cluster.Value, scaleOut, outDirectory, cancellationToken);
        await Log.CloseAndFlushAsync();
        return exit;
    }

    var results = new List<RunResult>();
    var csv = Path.Combine(outDirectory, "results.csv");
    var repetitionsCsv = Path.Combine(outDirectory, "repetitions.csv");
    // Cells of a few seconds move by 10-40 % between runs on a small machine, as much as the gaps between modes: a cell
    // is run three times unless asked otherwise, and judged by its median.
    var repeats = parse.GetValue(repeatOption) ?? (quick ? 1 : 3);
    if (repeats < 1)
    {
        Console.Error.WriteLine("--repeat takes 1 or more.");
        return 2;
    }

    var cpuCsv = Path.Combine(outDirectory, "cpu.csv");
    var restartReport = Path.Combine(outDirectory, "restart.txt");
    File.Delete(restartReport); // this run's restarts only, as results.csv holds this run's results only
    Console.WriteLine($"Snapper runner: {workloadName}, modes {string.Join(", ", modes)}, {points.Count} point(s), logging {string.Join(", ", durabilities.Select(d => d.Name))}, " +
        $"{settings.Epochs} x {settings.EpochLength.TotalSeconds:0.#} s epochs ({settings.WarmupEpochs} warm-up), output {outDirectory}");

    // The gen0 budget can only be set in the environment, before the process starts: the launch profile sets it under
    // `dotnet run`, and a run of the built runner without it measures the collector, not Snapper (PACTs in TPC-C paused
    // for a fifth of the time at Server GC's default budget, against a few percent at 64 MB).
    if (cluster is null && Environment.GetEnvironmentVariable("DOTNET_GCgen0size") is null)
    {
        Console.WriteLine("Warning: DOTNET_GCgen0size is not set, so the embedded silo runs at Server GC's default gen0 budget and its results are " +
            "not comparable with the committed ones. Run through `dotnet run` (its launch profile sets it), or export DOTNET_GCgen0size=0x4000000.");
    }

    // Marketplace actors' concurrency control and dependency style are fixed per silo: each combination gets silos of
    // its own, tagged in the results (none: the silo's defaults). kvbank has a branch class per level: points of one silo.
    var siloVariants = cluster is null && workloadName == "marketplace"
        ? (from level in parse.GetValue(concurrencyOption) is { } levelList ? Names<Snapper.ConcurrencyLevel>(levelList).Select(l => (Snapper.ConcurrencyLevel?)l) : [null]
           from style in parse.GetValue(dependenciesOption) is { } styleList ? Names<global::Marketplace.DependencyStyle>(styleList).Select(d => (global::Marketplace.DependencyStyle?)d) : [null]
           select SiloVariant.Of(level, style)).ToArray()
        : [new SiloVariant([], [])];
    // kvbank's variants differ tenfold in what they log: on a shared silo, checkpoints still folding one variant's log
    // run during the next one (measured: key-value at actor level with fsync ran at a third of its throughput after
    // the opaque variant). Each of its points gets a silo of its own; other workloads' points share one.
    IReadOnlyList<IWorkload>[] pointGroups = workloadName == "kvbank" && cluster is null ? [.. points.Select(point => (IReadOnlyList<IWorkload>)[point])] : [points];
    // Every mode of every repetition on a silo of its own by default: in a shared silo, a mode ran 10-40 % slower after
    // others (their actors and stored orders stay on the heap), and the order of modes decided part of a comparison.
    var siloPerMode = cluster is null && (parse.GetValue(siloPerModeOption) ?? workloadName is not ("kvbank" or "marketplace"));
    // Searched once per point and mode (and setting); later repetitions run what the first found.
    var searched = new Dictionary<(string Setting, string Point, BenchmarkMode Mode), int>();
    foreach (var (durability, variant, group) in from d in durabilities from v in siloVariants from g in pointGroups select (d, v, g))
    {
        if (durability is { DataFolder: not null, Fsync: false })
        {
            Console.WriteLine($"WARNING: log={durability.Name} does not fsync: a crash can lose acknowledged transactions. Experiments only.");
        }

        // Repetitions interleave the modes: all of one repetition before the next.
        var cells = (from rep in Enumerable.Range(1, repeats) from point in @group from mode in modes select (Point: point, Repetition: rep, Mode: mode)).ToArray();
        foreach (var siloCells in siloPerMode ? cells.Select(cell => new[] { cell }) : [cells])
        {
            if (durability.DataFolder is { } fresh && Directory.Exists(fresh))
            {
                Directory.Delete(fresh, recursive: true);
            }

            using (var host = RunnerHost.Create(variant.Arguments, cluster, durability))
            {
                await host.StartAsync(cancellationToken);
                var grains = host.Services.GetRequiredService<IGrainFactory>();
                var runner = new ExperimentRunner(grains, settings, host.Services.GetRequiredService<ILogger<ExperimentRunner>>(), usage, embedded: cluster is null);
                var search = new PipelineSearch(new ExperimentRunner(grains, PipelineSearch.ProbeSettings(settings), host.Services.GetRequiredService<ILogger<ExperimentRunner>>()));
                var setting = $"{durability.Name} {string.Join(' ', variant.Tags.Select(t => $"{t.Key}={t.Value}"))}";
                foreach (var (point, repetition, mode) in siloCells)
                {
                    KeyValuePair<string, string>[] repeatTag = repeats > 1 ? [Repetitions.Tag(repetition)] : [];
                    if (!point.Modes.Contains(mode))
                    {
                        throw new ArgumentException($"{point.Name} has no {mode} mode.");
                    }

                    Console.WriteLine($"Preparing {point.Name} for {mode} (log={durability.Name}{string.Concat(variant.Tags.Select(t => $", {t.Key} {t.Value}"))}) ...");
                    await point.PrepareAsync(grains, mode, cancellationToken);
                    foreach (var listed in settings.Pipelines.GetValueOrDefault(mode) ?? RunSettings.DefaultPipelines[mode])
                    {
                        var pipeline = listed;
                        var key = (setting, string.Join(';', point.Parameters.Select(p => $"{p.Key}={p.Value}")), mode);
                        if (listed == PipelineSearch.Auto && !searched.TryGetValue(key, out pipeline))
                        {
                            searched[key] = pipeline = await search.FindAsync(point, mode, new SyncProgress(Console.WriteLine), cancellationToken);
                        }

                        var result = await runner.RunAsync(point, mode, pipeline, new SyncProgress(Console.WriteLine), cancellationToken);
                        var problem = await point.CheckConsistencyAsync(grains, mode, cancellationToken);
                        result = result with { Parameters = [new("log", durability.Name), .. variant.Tags, .. tags, .. result.Parameters, .. repeatTag], ConsistencyError = problem };
                        Console.WriteLine($"  -> {result.CommittedPerSecond:N0} txn/s, p50 {result.P50Ms:F2} ms, p99 {result.P99Ms:F2} ms, p99.9 {result.P999Ms:F2} ms, mean {result.MeanMs:F2} ms, " +
                            $"aborts {result.AbortRate:P1}, {(double.IsNaN(result.LogBytesPerTxn) ? "" : $"log {result.LogBytesPerTxn:N0} B and {result.FsyncsPerTxn:F3} fsyncs per txn, ")}" +
                            $"consistency {problem ?? "ok"}");
                        if (result.Usage is { Count: > 0 })
                        {
                            Console.WriteLine($"     {UsageOutput.Line(result)}");
                        }

                        results.Add(result);
                        CsvOutput.Write(csv, Repetitions.Summarize(results));
                        if (repeats > 1)
                        {
                            CsvOutput.Write(repetitionsCsv, results);
                        }

                        if (usage is not null)
                        {
                            UsageOutput.Write(cpuCsv, results);
                        }
                    }
                }

                await host.StopAsync(CancellationToken.None);
            }
        }

        if (durability.DataFolder is { } folder)
        {
            var restart = await RestartReport.MeasureAsync(durability, folder, cancellationToken);
            Console.WriteLine(restart.Text);
            File.AppendAllText(restartReport, restart.Text + Environment.NewLine);
        }
    }

    var summary = Repetitions.Summarize(results);
    ResultTable.Print(summary);
    UsageOutput.Print(results);
    var charts = ChartOutput.Write(outDirectory, workloadName, summary);
    Console.WriteLine($"Wrote {csv}");
    if (repeats > 1)
    {
        Console.WriteLine($"Wrote {repetitionsCsv}");
    }

    if (usage is not null)
    {
        Console.WriteLine($"Wrote {cpuCsv}");
    }
    foreach (var chart in charts)
    {
        Console.WriteLine($"Wrote {chart}");
    }

    await Log.CloseAndFlushAsync();
    return results.All(r => r.ConsistencyError is null && r.Committed > 0) ? 0 : 1;
});

return await root.Parse(args).InvokeAsync();

static IReadOnlyList<IWorkload> SmallBankPoints(
    int actors, int[] txnSizes, double[] zipfs, double[]? hots, double pactPercent, OrleansTxnLockOrder orleansTxnLocks, WorkerSpread? spread) =>
    (from txnSize in txnSizes
     from skew in hots is null ? zipfs.Select(z => (Zipf: z, Hot: (double?)null)) : hots.Select(h => (Zipf: 0.0, Hot: (double?)h))
     from dist in spread is null ? [(double?)null] : spread.Percents.Select(p => (double?)p)
     let settings = new SmallBankSettings(actors, txnSize, skew.Zipf, skew.Hot, pactPercent, orleansTxnLocks)
     select (IWorkload)new SmallBankWorkload(settings, dist is { } percent ? AccountsByWorker(settings, spread!, percent) : null)).ToArray();

// Each worker's share of the accounts gets the run's skew of its own: a hot set of the same fraction, or the same Zipf.
static WorkerKeyChoice AccountsByWorker(SmallBankSettings settings, WorkerSpread spread, double percent) =>
    new(settings.Actors, spread.Workers, percent, spread.Level,
        share => settings.HotFraction is { } hot ? KeySampler.HotSet(share, hot) : KeySampler.Zipf(share, settings.Zipf),
        (grains, account) => grains.GetGrain<ISnapperAccount>(account).GetGrainId());

static IReadOnlyList<IWorkload> TpccPoints(int[] warehouses, int[] orderPartitions, int items, OrleansTxnLockOrder orleansTxnLocks) =>
    (from w in warehouses
     from partitions in orderPartitions
     select (IWorkload)new TpccWorkload(new TpccSettings(w, partitions, items, OrleansTxnLocks: orleansTxnLocks))).ToArray();

static IReadOnlyList<IWorkload> MarketplacePoints(int customers, double[] actorSkews, double[] keySkews, OrleansTxnLockOrder orleansTxnLocks, bool quick) =>
    (from actorSkew in actorSkews
     from keySkew in keySkews
     select (IWorkload)new Snapper.Workloads.Marketplace.MarketplaceWorkload(
         new(Sellers: quick ? 8 : 20, ProductsPerSeller: quick ? 20 : 100, customers, actorSkew, keySkew, orleansTxnLocks))).ToArray();

// The variants innermost, so that all of one point run next to each other; opaque state has actor level only.
static IReadOnlyList<IWorkload> KeyValueBankPoints(
    int actors, int[] actorSizes, int[] txnSizes, double[] actorSkews, double[] keySkews,
    Snapper.Workloads.KeyValueBank.BranchStateKind[] states, Snapper.ConcurrencyLevel[] levels) =>
    (from size in actorSizes
     from txnSize in txnSizes
     from actorSkew in actorSkews
     from keySkew in keySkews
     from state in states
     from level in state == Snapper.Workloads.KeyValueBank.BranchStateKind.Opaque ? [Snapper.ConcurrencyLevel.Actor] : levels
     select (IWorkload)new Snapper.Workloads.KeyValueBank.KeyValueBankWorkload(new(actors, size, txnSize, state, level, actorSkew, keySkew))).ToArray();

static T[] Names<T>(string list) where T : struct, Enum =>
    list.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).Select(name => Enum.Parse<T>(name, ignoreCase: true)).Distinct().ToArray();

static IReadOnlyList<BenchmarkDurability> Durabilities(string list, string walFolder, TimeSpan checkpointInterval) =>
    list.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).Select(name => name.ToLowerInvariant() switch
    {
        "off" => BenchmarkDurability.InMemory,
        "fsync" => new BenchmarkDurability(name, Path.Combine(walFolder, name), Fsync: true, checkpointInterval),
        "fsync-nockpt" => new BenchmarkDurability(name, Path.Combine(walFolder, name), Fsync: true, TimeSpan.Zero),
        "nofsync" => new BenchmarkDurability(name, Path.Combine(walFolder, name), Fsync: false, checkpointInterval),
        _ => throw new ArgumentException($"Unknown --logging '{name}'; use fsync, fsync-nockpt, nofsync or off."),
    }).ToArray();

// A soak runs one configuration for a long time: sweeps, epochs and a remote cluster (whose memory and gauges live
// in other processes) do not apply.
static string? SoakProblem(int minutes, int points, int durabilities, int? cluster, RunSettings settings, BenchmarkMode[] modes, object? epochOption)
{
    if (minutes < 1)
    {
        return "--minutes must be at least 1.";
    }

    if (cluster is not null)
    {
        return "--minutes needs the embedded silo: the memory and the gauges it samples are the silo's process's.";
    }

    if (points > 1 || durabilities > 1)
    {
        return "--minutes runs one parameter point and one --logging setting; give no lists.";
    }

    if (epochOption is not null)
    {
        return "--epochs, --warmup and --epoch-seconds do not apply to --minutes.";
    }

    if (modes.Distinct().Count() != modes.Length)
    {
        return "--modes names a mode twice.";
    }

    foreach (var mode in modes)
    {
        var listed = settings.Pipelines.GetValueOrDefault(mode) ?? RunSettings.DefaultPipelines[mode];
        if (listed.Length != 1)
        {
            return $"--minutes keeps one pipeline per mode; {mode} has several.";
        }

        if (listed[0] == PipelineSearch.Auto)
        {
            return $"--minutes runs the modes together and cannot search a pipeline; give {mode} a number.";
        }
    }

    return null;
}

static int[] Ints(string list) => list.Split(',', StringSplitOptions.RemoveEmptyEntries).Select(v => int.Parse(v, CultureInfo.InvariantCulture)).ToArray();

static double[] Doubles(string list) => list.Split(',', StringSplitOptions.RemoveEmptyEntries).Select(v => double.Parse(v, CultureInfo.InvariantCulture)).ToArray();

static KeyValuePair<string, string> Tag(string entry)
{
    var parts = entry.Split('=', 2);
    return parts.Length == 2 && parts[0].Length > 0 && !entry.Contains(';', StringComparison.Ordinal) && !entry.Contains(',', StringComparison.Ordinal)
        ? new(parts[0], parts[1])
        : throw new ArgumentException($"--tag takes KEY=VALUE without ';' or ',', not '{entry}'.");
}

static IReadOnlyDictionary<BenchmarkMode, int[]> ParsePipelines(string[] entries, bool searchByDefault)
{
    var pipelines = searchByDefault
        ? RunSettings.DefaultPipelines.ToDictionary(p => p.Key, _ => new[] { PipelineSearch.Auto })
        : new Dictionary<BenchmarkMode, int[]>(RunSettings.DefaultPipelines);
    foreach (var entry in entries)
    {
        var parts = entry.Split('=', 2);
        if (parts.Length != 2 || !Enum.TryParse<BenchmarkMode>(parts[0], ignoreCase: true, out var mode))
        {
            throw new ArgumentException($"--pipeline takes MODE=N[,N...] or MODE=auto, not '{entry}'.");
        }

        pipelines[mode] = parts[1].Equals("auto", StringComparison.OrdinalIgnoreCase) ? [PipelineSearch.Auto] : Ints(parts[1]);
        if (pipelines[mode].Any(n => n < 1) && pipelines[mode] is not [PipelineSearch.Auto])
        {
            throw new ArgumentException($"--pipeline {entry}: pipelines are at least 1.");
        }
    }

    return pipelines;
}

/// <summary>How a cluster run spreads transactions over workers: the --dist-percent values swept, --txn-dist-level, the workers.</summary>
internal sealed record WorkerSpread(double[] Percents, int Level, int Workers);

/// <summary>Reports progress on the calling thread (Progress&lt;T&gt; would post to the thread pool and reorder lines).</summary>
internal sealed class SyncProgress(Action<string> report) : IProgress<string>
{
    public void Report(string value) => report(value);
}

/// <summary>Settings of a silo of its own (configuration arguments) and the tags its results carry.</summary>
internal sealed record SiloVariant(string[] Arguments, KeyValuePair<string, string>[] Tags)
{
    public static SiloVariant Of(Snapper.ConcurrencyLevel? level, global::Marketplace.DependencyStyle? style) => new(
        [.. level is null ? [] : new[] { $"--Marketplace:Concurrency={level}" }, .. style is null ? [] : new[] { $"--Marketplace:Dependencies={style}" }],
        [.. level is null ? [] : new[] { KeyValuePair.Create("concurrency", level.Value.ToString().ToLowerInvariant()) },
         .. style is null ? [] : new[] { KeyValuePair.Create("dependencies", style.Value.ToString().ToLowerInvariant()) }]);
}
