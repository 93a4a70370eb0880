using Orleans.Hosting;
using Orleans.Runtime.Hosting;
using Orleans.TestingHost;
using Snapper.Workloads;
using Snapper.Workloads.Marketplace;
using Snapper.Workloads.SmallBank;
using Snapper.Workloads.Storage;
using Snapper.Workloads.Tpcc;
using Xunit;

namespace Snapper.Tests.Workloads;

/// <summary>
/// The Orleans Transactions baselines of SmallBank, TPC-C and the marketplace on a silo of their own (the shared test silo has no Orleans
/// Transactions): both lock orders keep each workload's invariants, and the ascending order lets many transactions over a
/// few actors run at once without any of them aborting, which the parallel order cannot promise (two of its transactions
/// can wait for each other until Orleans' transaction timeout of 10 s aborts one). Auto, the runner's default, takes the
/// ascending order with more than one transaction in flight, so it passes where the parallel order fails.
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
    [InlineData(OrleansTxnLockOrder.Auto, 8, 25)]
    [InlineData(OrleansTxnLockOrder.Parallel, 1, 40)]
    public Task Transfers_over_a_few_hot_accounts_all_commit_and_keep_the_total(OrleansTxnLockOrder order, int inFlight, int perLoop)
    {
        var workload = new SmallBankWorkload(new SmallBankSettings(Actors: 6, TxnSize: 4, Zipf: 1.25, OrleansTxnLocks: order));
        return EveryTransactionCommitsAndTheWorkloadChecks(workload, order, inFlight, perLoop);
    }

    /// <summary>
    /// Ascending: one warehouse with four stock actors, so that nearly every NewOrder writes all four and NewOrders of
    /// different districts, eight in flight, meet on each of them, and every NewOrder reads the same warehouse and item
    /// actors. With the parallel order this case fails (23 of 120 NewOrders aborted, after 10-s waits), and so it did
    /// while only the writes were ordered (Orleans' lock groups make parallel reads wait for each other too). Parallel: one
    /// NewOrder in flight. No rollbacks, so every NewOrder must commit.
    /// </summary>
    [Theory]
    [InlineData(OrleansTxnLockOrder.Ascending, 8, 15)]
    [InlineData(OrleansTxnLockOrder.Auto, 8, 15)]
    [InlineData(OrleansTxnLockOrder.Parallel, 1, 30)]
    public Task New_orders_over_a_few_stock_actors_all_commit_and_keep_orders_and_stock_consistent(OrleansTxnLockOrder order, int inFlight, int perLoop)
    {
        var workload = new TpccWorkload(new TpccSettings(
            Warehouses: 1, OrderPartitions: 1, Items: 100, StockPerActor: 25, RollbackPercent: 0, OrleansTxnLocks: order));
        return EveryTransactionCommitsAndTheWorkloadChecks(workload, order, inFlight, perLoop);
    }

    /// <summary>
    /// Ascending: four sellers of five products each and eight customers' loops, so that price changes reach carts that
    /// are being filled, emptied and checked out, and checkouts meet on stock, records and sellers (with the parallel order
    /// this case fails: 29 of 240 transactions aborted, in 41 s of 10-s waits). Parallel: one transaction in flight.
    /// </summary>
    [Theory]
    [InlineData(OrleansTxnLockOrder.Ascending, 8, 30)]
    [InlineData(OrleansTxnLockOrder.Auto, 8, 30)]
    [InlineData(OrleansTxnLockOrder.Parallel, 1, 60)]
    public Task A_marketplace_mix_over_a_few_sellers_all_commits_and_keeps_prices_and_views_consistent(OrleansTxnLockOrder order, int inFlight, int perLoop)
    {
        var workload = new MarketplaceWorkload(new MarketplaceSettings(Sellers: 4, ProductsPerSeller: 5, Customers: 16, OrleansTxnLocks: order));
        return EveryTransactionCommitsAndTheWorkloadChecks(workload, order, inFlight, perLoop);
    }

    [Fact]
    public void Auto_calls_in_parallel_only_when_one_transaction_is_in_flight()
    {
        Assert.Equal(OrleansTxnLockOrder.Parallel, OrleansTxnLocks.Resolve(OrleansTxnLockOrder.Auto, loops: 1));
        Assert.Equal(OrleansTxnLockOrder.Ascending, OrleansTxnLocks.Resolve(OrleansTxnLockOrder.Auto, loops: 2));
        Assert.Equal(OrleansTxnLockOrder.Ascending, OrleansTxnLocks.Resolve(OrleansTxnLockOrder.Ascending, loops: 1));
        Assert.Equal(OrleansTxnLockOrder.Parallel, OrleansTxnLocks.Resolve(OrleansTxnLockOrder.Parallel, loops: 8));
    }

    /// <summary>
    /// Runs <paramref name="workload"/>'s baseline with <paramref name="inFlight"/> loops of <paramref name="perLoop"/>
    /// transactions: every one must commit, the workload's check must pass, and its results must name the lock order.
    /// </summary>
    private async Task EveryTransactionCommitsAndTheWorkloadChecks(IWorkload workload, OrleansTxnLockOrder order, int inFlight, int perLoop)
    {
        await workload.PrepareAsync(_cluster.Client, BenchmarkMode.OrleansTxn, CancellationToken.None);

        var outcomes = await WorkloadTests.RunAsync(_cluster.Client, workload, BenchmarkMode.OrleansTxn, inFlight, perLoop);

        Assert.All(outcomes, o => Assert.True(o.Committed, $"a transaction aborted: {o.AbortReason}"));
        Assert.Null(await workload.CheckConsistencyAsync(_cluster.Client, BenchmarkMode.OrleansTxn, CancellationToken.None));
        Assert.Contains(OrleansTxnLocks.ParameterOf(order), workload.ModeParameters(BenchmarkMode.OrleansTxn));
    }
}
