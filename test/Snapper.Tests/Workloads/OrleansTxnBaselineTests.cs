using Orleans.Hosting;
using Orleans.Runtime.Hosting;
using Orleans.TestingHost;
using Snapper.Workloads;
using Snapper.Workloads.SmallBank;
using Snapper.Workloads.Storage;
using Xunit;

namespace Snapper.Tests.Workloads;

/// <summary>
/// SmallBank's Orleans Transactions baseline on a silo of its own (the shared test silo has no Orleans Transactions): both
/// lock orders move money correctly, and the ascending order lets many transfers over a few accounts run at once without
/// any of them aborting, which the parallel order cannot promise (two of its transfers can wait for each other until
/// Orleans' transaction timeout of 10 s aborts one).
/// </summary>
public sealed class OrleansTxnBaselineTests : IAsyncLifetime
{
    private InProcessTestCluster _cluster = null!;

    public async Task InitializeAsync() => _cluster = await ClusterFixture.StartAsync(
        _ => { },
        hooks: null,
        configureSilo: silo =>
        {
            silo.Services.AddGrainStorage(OrleansTxnStorage.Name, (_, _) => new ByReferenceGrainStorage());
            silo.UseTransactions();
        },
        configureClient: client => client.UseTransactions());

    public Task DisposeAsync() => _cluster.DisposeAsync().AsTask();

    /// <summary>
    /// Ascending: six accounts, four per transfer, eight transfers in flight, so that nearly every pair of transfers
    /// shares two accounts, which in the parallel order is the shape of a deadlock (with the parallel order this case
    /// fails: about a fifth of its transfers abort, each after 10 s). Parallel: one transfer in flight, nothing to deadlock
    /// with, so its results are exact too.
    /// </summary>
    [Theory]
    [InlineData(OrleansTxnLockOrder.Ascending, 8, 25)]
    [InlineData(OrleansTxnLockOrder.Parallel, 1, 40)]
    public async Task Transfers_over_a_few_hot_accounts_all_commit_and_keep_the_total(OrleansTxnLockOrder order, int inFlight, int perLoop)
    {
        var workload = new SmallBankWorkload(new SmallBankSettings(Actors: 6, TxnSize: 4, Zipf: 1.25, OrleansTxnLocks: order));
        await workload.PrepareAsync(_cluster.Client, BenchmarkMode.OrleansTxn, CancellationToken.None);

        var outcomes = await WorkloadTests.RunAsync(_cluster.Client, workload, BenchmarkMode.OrleansTxn, inFlight, perLoop);

        Assert.All(outcomes, o => Assert.True(o.Committed, $"a transfer aborted: {o.AbortReason}"));
        Assert.Null(await workload.CheckConsistencyAsync(_cluster.Client, BenchmarkMode.OrleansTxn, CancellationToken.None));
        Assert.Contains(
            new KeyValuePair<string, string>(SmallBankWorkload.LocksParameter, order.ToString().ToLowerInvariant()),
            workload.ModeParameters(BenchmarkMode.OrleansTxn));
    }
}
