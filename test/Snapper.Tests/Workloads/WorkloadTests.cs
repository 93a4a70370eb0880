using Microsoft.Extensions.DependencyInjection;
using Snapper.Workloads;
using Snapper.Workloads.SmallBank;
using Snapper.Workloads.Tpcc;
using Xunit;

namespace Snapper.Tests.Workloads;

/// <summary>
/// The benchmark workloads run as ACTs on the test silo and keep their invariants: what the runner measures is
/// correct work, and the consistency checks the runner relies on do catch a broken state.
/// </summary>
[Collection(ClusterCollection.Name)]
public sealed class WorkloadTests(ClusterFixture fixture)
{
    [Theory]
    [InlineData(BenchmarkMode.ACT)]
    [InlineData(BenchmarkMode.PACT)]
    public async Task Concurrent_tpcc_new_orders_keep_districts_orders_and_stock_consistent(BenchmarkMode mode)
    {
        // Small scale, many rollbacks and remote lines, so that a few hundred orders exercise every path. As PACTs,
        // a NewOrder declares both order actors of its district and uses one; a rollback cascades.
        var workload = new TpccWorkload(new TpccSettings(Warehouses: 2, OrderPartitions: 2, Items: 1_000, RemotePercent: 20, RollbackPercent: 10));
        await workload.PrepareAsync(fixture.Client, mode, CancellationToken.None);

        // Enough concurrent NewOrders that cascading aborts catch PACTs in the middle of their calls: this is
        // how a race between an abort and a stale PACT's GetState showed up (stock without its order).
        var outcomes = await RunAsync(workload, mode, loops: 16, perLoop: 80);

        Assert.Contains(outcomes, o => o.Committed);
        Assert.Contains(outcomes, o => o.AbortReason == AbortClassifier.UserRollback);
        Assert.DoesNotContain(outcomes, o => o.AbortReason?.StartsWith("Error", StringComparison.Ordinal) == true);
        Assert.Null(await workload.CheckConsistencyAsync(fixture.Client, mode, CancellationToken.None));
    }

    [Theory]
    [InlineData(BenchmarkMode.ACT)]
    [InlineData(BenchmarkMode.PACT)]
    [InlineData(BenchmarkMode.Hybrid)]
    public async Task Concurrent_smallbank_multitransfers_keep_the_total_balance(BenchmarkMode mode)
    {
        var workload = new SmallBankWorkload(new SmallBankSettings(Actors: 50, TxnSize: 4, Zipf: 1.25, PactPercent: 50));
        await workload.PrepareAsync(fixture.Client, mode, CancellationToken.None);

        var outcomes = await RunAsync(workload, mode, loops: 8, perLoop: 50);

        Assert.Contains(outcomes, o => o.Committed);
        Assert.DoesNotContain(outcomes, o => o.AbortReason?.StartsWith("Error", StringComparison.Ordinal) == true);
        Assert.Null(await workload.CheckConsistencyAsync(fixture.Client, mode, CancellationToken.None));
    }

    [Fact]
    public async Task Cached_references_are_made_once_per_factory_and_key_and_each_reaches_its_grain()
    {
        var silo = fixture.Cluster.Silos[0].ServiceProvider.GetRequiredService<IGrainFactory>();
        var client = fixture.Client;
        var (id, other) = (ClusterFixture.NewId(), ClusterFixture.NewId());

        var fromClient = client.Cached<INtAccount>(id);
        Assert.Same(fromClient, client.Cached<INtAccount>(id));
        Assert.NotSame(fromClient, client.Cached<INtAccount>(other));

        // The silo's factory keeps its own: a reference is bound to the runtime that made it.
        var fromSilo = silo.Cached<INtAccount>(id);
        Assert.NotSame(fromClient, fromSilo);
        Assert.Same(fromSilo, silo.Cached<INtAccount>(id));
        Assert.Equal(fromClient.GetGrainId(), fromSilo.GetGrainId());

        await fromClient.Init(41);
        await fromSilo.Deposit(1);
        Assert.Equal(42, await client.Cached<INtAccount>(id).Read());
    }

    [Fact]
    public void The_tpcc_check_reports_a_lost_order_and_stock_without_its_order()
    {
        TpccSummary District(int issued) => new(1, 3, issued, 0, 0, 0, 0, 0, 0);
        TpccSummary Orders(int stored, int max, long quantity, long lines) => new(1, 3, 0, stored, max, quantity, 0, 0, lines);
        TpccSummary Stock(long ytd, long count) => new(1, 0, 0, 0, 0, 0, ytd, count, 0);

        Assert.Null(TpccWorkload.Check([District(2), Orders(1, 1, 5, 1), Orders(1, 2, 7, 2), Stock(12, 3)]));
        Assert.Contains("district 1/3", TpccWorkload.Check([District(3), Orders(1, 1, 5, 1), Orders(1, 2, 7, 2), Stock(12, 3)]));
        Assert.Contains("stock shows 13 units", TpccWorkload.Check([District(2), Orders(1, 1, 5, 1), Orders(1, 2, 7, 2), Stock(13, 3)]));
    }

    private Task<RunOutcome[]> RunAsync(IWorkload workload, BenchmarkMode mode, int loops, int perLoop) =>
        RunAsync(fixture.Client, workload, mode, loops, perLoop);

    /// <summary><paramref name="loops"/> client loops at once, each running <paramref name="perLoop"/> transactions one after another.</summary>
    internal static async Task<RunOutcome[]> RunAsync(IGrainFactory grains, IWorkload workload, BenchmarkMode mode, int loops, int perLoop)
    {
        var runs = Enumerable.Range(0, loops).Select(async loop =>
        {
            var driver = workload.CreateDriver(grains, mode, seed: 100 + loop, loops);
            var outcomes = new List<RunOutcome>();
            for (var i = 0; i < perLoop; i++)
            {
                outcomes.Add(await driver.RunOneAsync());
            }

            return outcomes;
        });
        return (await Task.WhenAll(runs)).SelectMany(o => o).ToArray();
    }
}
