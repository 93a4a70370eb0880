using Bank;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Snapper;
using Snapper.Hosting;

// One silo with localhost clustering and Snapper, in this process; settings from the "Snapper" section.
var builder = Host.CreateApplicationBuilder(args);
builder.Logging.SetMinimumLevel(LogLevel.Warning).AddFilter("Orleans", LogLevel.Error);
builder.UseOrleans(silo => silo
    .UseLocalhostClustering()
    .AddSnapper(builder.Configuration.GetSection(SnapperOptions.SectionName)));
using var host = builder.Build();
await host.StartAsync();
var grains = host.Services.GetRequiredService<IGrainFactory>();
IAccountActor Account(long id) => grains.GetGrain<IAccountActor>(id);

long[] ids = [0, 1, 2, 3, 4];
foreach (var id in ids)
{
    var account = Account(id);
    await account.StartTxn(account.Deposit, 100m);
}

Console.WriteLine($"Opened {ids.Length} accounts with 100 each.");

var first = Account(0);
var left = await first.StartTxn(first.Transfer, new TransferInput(To: 1, Amount: 30m));
Console.WriteLine($"committed  Transfer 0 -> 1 of 30; account 0 has {left} left");

var payer = Account(2);
left = await payer.StartTxn(payer.MultiTransfer, new MultiTransferInput(To: [0, 1, 3, 4], Amount: 10m));
Console.WriteLine($"committed  MultiTransfer 2 -> [0, 1, 3, 4] of 10 each, in parallel; account 2 has {left} left");

// The same transfers as PACTs: declare every account the transaction calls (the first one included).
// PACTs are ordered in batches before they run and never abort on conflicts.
var pactPayer = Account(4);
left = await pactPayer.StartTxn(pactPayer.Transfer, new TransferInput(To: 0, Amount: 5m), ActorAccessInfo.Of(Account(4), Account(0)));
Console.WriteLine($"committed  PACT Transfer 4 -> 0 of 5; account 4 has {left} left");

// A mix of both at once on the same accounts: ACTs and PACTs are kept serializable together. An ACT that meets
// conflicting transactions may give way to them (wait-die, or to PACT batches); the abort is transient, and a retry
// policy submits it again as a new transaction until it commits (nothing of an aborted attempt remains).
var gaveWay = new Dictionary<AbortReason, int>();
var retry = new RetryPolicy
{
    MaxAttempts = 50,
    OnRetry = (abort, _) =>
    {
        lock (gaveWay)
        {
            gaveWay[abort.Reason] = gaveWay.GetValueOrDefault(abort.Reason) + 1;
        }
    },
};
var mixed = Enumerable.Range(0, 20).Select(async i =>
{
    var (from, to) = (ids[i % ids.Length], ids[(i + 1) % ids.Length]);
    var transfer = new TransferInput(To: to, Amount: 1m);
    try
    {
        _ = i % 2 == 0
            ? await Account(from).StartTxn(Account(from).Transfer, transfer, ActorAccessInfo.Of(Account(from), Account(to)), retry)
            : await Account(from).StartTxn(Account(from).Transfer, transfer, retry);
        return true;
    }
    catch (TransactionAbortedException)
    {
        return false; // out of attempts; nothing of it remains
    }
}).ToArray();
var committedMixed = (await Task.WhenAll(mixed)).Count(ok => ok);
Console.WriteLine($"committed  {committedMixed} of 20 concurrent transfers of 1, half PACTs and half ACTs; retried after " +
    (gaveWay.Count == 0 ? "no abort" : string.Join(", ", gaveWay.Select(r => $"{r.Value} {r.Key}"))));

var poor = Account(3);
try
{
    await poor.StartTxn(poor.Transfer, new TransferInput(To: 4, Amount: 1_000m));
    Console.WriteLine("unexpected: the overdraft committed");
    return 1;
}
catch (TransactionAbortedException abort)
{
    Console.WriteLine($"rejected   Transfer 3 -> 4 of 1000: transaction {abort.Tid} aborted, reason {abort.Reason}: {abort.InnerException?.Message}");
}

var balances = await first.StartTxn(first.Balances, ids);
Console.WriteLine("Final balances: " + string.Join(", ", ids.Select((id, i) => $"{id}={balances[i]}")));
Console.WriteLine($"Total: {balances.Sum()} (expected {ids.Length * 100m})");

await host.StopAsync();
return balances.Sum() == ids.Length * 100m ? 0 : 1;
