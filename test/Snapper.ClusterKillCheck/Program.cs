using System.Globalization;
using System.Text;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Orleans.Configuration;
using Serilog;
using Serilog.Events;
using Snapper;
using Snapper.ClusterKillCheck;
using Snapper.Workloads.Ledger;

// The cluster kill test's client (test/cluster-kill-test.sh starts the cluster, this client, and kills and restarts
// silos under it): opens a ledger of accounts on every worker, moves money between them with local and global ACTs and
// PACTs until the script creates DIR/stop, then reads every account and checks the outcome of every operation against
// what the accounts hold (LedgerCheck). Exit code 0: no violation; 1: violations; 2: the check could not be made, or only
// on some accounts (the others did not answer reads).
Options options;
try
{
    options = Options.Parse(args);
}
catch (ArgumentException e)
{
    Console.Error.WriteLine($"Snapper.ClusterKillCheck: {e.Message}");
    Console.Error.WriteLine(Options.Usage);
    return 3;
}

// Reports, progress lines and files read the same on any machine (the script parses the progress file).
CultureInfo.DefaultThreadCurrentCulture = CultureInfo.CurrentCulture = CultureInfo.InvariantCulture;
const long Opening = 1_000_000_000; // far more than the run can move out of an account: no transfer is refused for money
Directory.CreateDirectory(options.Dir);
Log.Logger = new LoggerConfiguration()
    .MinimumLevel.Information()
    // Orleans' warnings say which gateway the client lost and when it came back; its information lines are noise.
    .MinimumLevel.Override("Orleans", LogEventLevel.Warning)
    .MinimumLevel.Override("Microsoft", LogEventLevel.Warning)
    .WriteTo.File(Path.Combine(options.Dir, "client.log"), outputTemplate: "{Timestamp:yyyy-MM-dd HH:mm:ss.fff} [{Level:u3}] {SourceContext}: {Message:lj}{NewLine}{Exception}")
    .CreateLogger();

var builder = Host.CreateApplicationBuilder(new HostApplicationBuilderSettings { Args = null });
builder.Services.AddSerilog();
builder.UseOrleansClient(client => client
    // Every worker's gateway: when the one a call went through dies, the client sends the next calls through another.
    // Orleans' localhost defaults keep the cluster and service ids the deploy silos use ("default").
    .UseLocalhostClustering(options.Gateways)
    .Configure<ClientMessagingOptions>(o => o.ResponseTimeout = options.ResponseTimeout)
    .AddSnapperClient());
using var host = builder.Build();
try
{
    await host.StartAsync().WaitAsync(TimeSpan.FromSeconds(120));
}
catch (Exception e)
{
    Console.WriteLine($"could not connect to the gateways {string.Join(", ", options.Gateways)}: {e.GetType().Name}: {Messages.FirstLine(e.Message)}");
    return 2;
}

var grains = host.Services.GetRequiredService<IClusterClient>();
var accounts = new LedgerAccounts(grains, options.Workers, options.AccountsPerWorker, options.FirstAccount);
for (var w = 0; w < options.Workers; w++)
{
    Console.WriteLine($"accounts on worker-{w}: {string.Join(", ", accounts.OnWorker(w))}");
}

// Opening sets the balance, so repeating it is harmless until the first transfer.
var opened = await Task.WhenAll(accounts.All.Select(id => RepeatAsync($"open {id}", TimeSpan.FromSeconds(120), async () =>
{
    var account = grains.GetGrain<ILedgerAccount>(id);
    await account.StartTxn(account.Open, Opening);
    return true;
})));
var initial = opened.All(o => o) ? await ReadAllAsync("initial read") : null;
if (initial is null || initial.Values.Any(s => s.Balance != Opening || s.Applied.Count != 0))
{
    Console.WriteLine("could not open the accounts (see above)");
    return 2;
}

Console.WriteLine($"{accounts.All.Length} accounts opened with {Opening} each; load starts: {options.Concurrency} transfers in flight");
var migrations = options.Migrations > 0 ? new MigrationLoad(grains, accounts, options.Migrations, options.Seed) : null;
var load = new LedgerLoad(grains, accounts, options, migrations);
migrations?.Start();
await load.RunAsync();
if (migrations is not null)
{
    await migrations.StopAsync(options.ResponseTimeout + TimeSpan.FromSeconds(30));
    Console.WriteLine($"migrations: {migrations.Moved} done, failed: {migrations.FailuresText}");
}

// A call cut off by a kill ends at the response timeout at the latest.
var drainBound = options.ResponseTimeout + TimeSpan.FromSeconds(10);
if (!await load.DrainAsync(drainBound))
{
    Console.WriteLine($"operations still in flight {drainBound.TotalSeconds:0} s after the stop: {load.Ops.Count(o => o.Outcome == Outcome.Pending)}, checked as pending (all or nothing)");
}

var ops = load.Ops.ToList();
Console.WriteLine($"[{load.Elapsed,6:0.0}s] load ended: {ops.Count} operations; reading every account");
var states = await ReadAllAsync("final read");
if (states is null)
{
    // Some account does not answer (a lock held by a transaction that never ends, a batch that never commits). Those
    // that do answer can still be checked, and the report names the others.
    Console.WriteLine($"the accounts could not be read together within {options.ReadTimeout.TotalSeconds:0} s; reading them one by one");
    states = await ReadEachAsync();
    if (states.Count == 0)
    {
        Console.WriteLine("no account could be read: no check made");
        WriteOps(ops, null);
        return 2;
    }
}
else
{
    // A second read a little later: an outcome still settling (a participant recovering, a decision on its way)
    // would show as a difference. The check uses the later read.
    await Task.Delay(TimeSpan.FromSeconds(3));
    var again = await ReadAllAsync("confirming read");
    if (again is not null)
    {
        var changed = accounts.All.Where(id => again[id].Balance != states[id].Balance || !again[id].Applied.SequenceEqual(states[id].Applied)).ToArray();
        if (changed.Length > 0)
        {
            Console.WriteLine($"note: {changed.Length} accounts changed between the final read and the confirming read 3 s later: {string.Join(", ", changed.Select(accounts.Label))}");
        }

        states = again;
    }
}

var check = new LedgerCheck(ops, accounts, states, Opening);
check.Run();
var report = check.Report();
Console.WriteLine();
Console.WriteLine($"== cluster kill check: {ops.Count} operations in {load.Elapsed:0} s (seed {options.Seed})");
Console.Write(report);
WriteOps(ops, states);
File.WriteAllLines(Path.Combine(options.Dir, "violations.txt"), check.Violations);
Console.WriteLine(check.Violations.Count > 0 ? $"FAIL: {check.Violations.Count} violations"
    : check.Incomplete ? $"INCOMPLETE: no violation on the {states.Count} accounts read, {accounts.All.Length - states.Count} could not be read"
    : "PASS: no violation");
await StopAsync();
return check.Violations.Count > 0 ? 1 : check.Incomplete ? 2 : 0;

// Every account in one ACT, so the balances read add up to a consistent total; repeated within the read timeout while
// it fails (a freshly restarted silo can be slow to answer, or abort the read on a lock still held by recovery).
async Task<Dictionary<long, LedgerState>?> ReadAllAsync(string what)
{
    var reader = grains.GetGrain<ILedgerAccount>(accounts.All[0]);
    var read = await RepeatAsync(what, options.ReadTimeout, () => reader.StartTxn(reader.ReadAll, accounts.All));
    return read?.Select((state, i) => (Id: accounts.All[i], State: state)).ToDictionary(x => x.Id, x => x.State);
}

// Each account in its own transaction, all at once, each repeated within a shorter bound: those that answer, with the
// last failure of each that does not printed.
async Task<Dictionary<long, LedgerState>> ReadEachAsync()
{
    var failures = new System.Collections.Concurrent.ConcurrentDictionary<long, string>();
    var reads = await Task.WhenAll(accounts.All.Select(async id =>
    {
        var account = grains.GetGrain<ILedgerAccount>(id);
        return (Id: id, State: await RepeatAsync($"read {id}", TimeSpan.FromSeconds(30), () => account.StartTxn(account.Read, 0), failure => failures[id] = failure));
    }));
    foreach (var (id, failure) in failures.Where(f => reads.Any(r => r.Id == f.Key && r.State is null)).OrderBy(f => f.Key))
    {
        Console.WriteLine($"account {accounts.Label(id)} could not be read: {failure}");
    }

    return reads.Where(r => r.State is not null).ToDictionary(r => r.Id, r => r.State!);
}

// Repeats CALL until it succeeds or BOUND passed; each distinct failure is printed once (or given to REPORT instead).
async Task<T?> RepeatAsync<T>(string what, TimeSpan bound, Func<Task<T>> call, Action<string>? report = null)
{
    var deadline = DateTime.UtcNow + bound;
    string? last = null;
    for (var attempt = 1; ; attempt++)
    {
        try
        {
            return await call();
        }
        catch (Exception e)
        {
            var failure = e is TransactionAbortedException aborted ? $"aborted ({aborted.Reason})" : e.GetType().Name;
            if (report is not null)
            {
                report($"{failure}: {Messages.FirstLine(e.Message)} (attempt {attempt})");
            }
            else if (failure != last)
            {
                Console.WriteLine($"{what}: attempt {attempt} failed: {failure}: {Messages.FirstLine(e.Message)}");
                last = failure;
            }

            if (DateTime.UtcNow >= deadline)
            {
                if (report is null)
                {
                    Console.WriteLine($"{what}: still failing after {bound.TotalSeconds:0} s ({attempt} attempts)");
                }

                return default;
            }

            await Task.Delay(TimeSpan.FromSeconds(1));
        }
    }
}

// Every operation and what became of it, and every account's final state, for a look after a failed run.
void WriteOps(List<Op> all, Dictionary<long, LedgerState>? final)
{
    var csv = new StringBuilder("id,kind,from,to,amount,phase,started,outcome,end_phase,ended,tid,applied_on,detail\n");
    foreach (var op in all.OrderBy(o => o.Id))
    {
        var appliedOn = final is null ? "" : string.Join(';', op.Accounts.Where(id => final.TryGetValue(id, out var state) && state.Applied.Contains(op.Id)));
        csv.Append(
            $"{op.Id},{op.Kind},{op.From},{string.Join(';', op.To)},{op.Amount},{op.Phase},{op.Started:0.000},{op.Outcome},{op.EndPhase},{op.Ended:0.000},{op.Tid},{appliedOn},\"{op.Detail.Replace("\"", "'", StringComparison.Ordinal)}\"\n");
    }

    File.WriteAllText(Path.Combine(options.Dir, "ops.csv"), csv.ToString());
    if (final is not null)
    {
        File.WriteAllLines(Path.Combine(options.Dir, "states.csv"), accounts.All.Where(final.ContainsKey).Select(id =>
            $"{id},worker-{accounts.WorkerOf(id)},{final[id].Balance},{final[id].Applied.Count},{string.Join(';', final[id].Applied)}").Prepend("account,worker,balance,applied,ops"));
    }
}

async Task StopAsync()
{
    try
    {
        await host.StopAsync(TimeSpan.FromSeconds(5));
    }
    catch (Exception)
    {
        // Stopping a client whose gateways went away can complain; the check is done.
    }

    await Log.CloseAndFlushAsync();
}
