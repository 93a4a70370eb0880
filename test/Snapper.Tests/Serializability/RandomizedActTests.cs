using Xunit;
using Xunit.Abstractions;

namespace Snapper.Tests.Serializability;

/// <summary>Randomized ACT workloads, checked for conflict serializability. Seeded: a failure names its seed.</summary>
[Collection(ClusterCollection.Name)]
public sealed class RandomizedActTests(ClusterFixture fixture, ITestOutputHelper output)
{
    /// <summary>Transactions per run in CI; SNAPPER_CHECKER_TXNS raises it for a long run (e.g. 100000).</summary>
    private static int Transactions => int.TryParse(Environment.GetEnvironmentVariable("SNAPPER_CHECKER_TXNS"), out var n) ? n : 2_000;

    [Theory]
    [InlineData(11)]
    [InlineData(12)]
    public async Task Random_acts_over_hot_and_cold_actors_are_serializable(int seed)
    {
        var shape = new RandomWorkloadShape();
        var workload = new RandomHistory(fixture.Client, ClusterFixture.NewIds(shape.HotActors + shape.ColdActors)[0], shape);

        var (history, final) = await workload.RunAsync(seed, Transactions, concurrency: 16, firstTxnId: seed * 1_000_000L);

        var committed = history.Count(t => t.Committed);
        output.WriteLine($"seed {seed}: {committed} committed, {history.Count - committed} aborted of {history.Count}");
        Assert.Equal(Transactions, history.Count);
        Assert.True(committed > Transactions / 4, $"seed {seed}: only {committed} committed");
        Assert.Empty(HistoryChecker.Check(history, final));
    }
}
