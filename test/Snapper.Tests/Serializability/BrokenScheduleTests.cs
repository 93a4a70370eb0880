using Xunit;
using Xunit.Abstractions;

namespace Snapper.Tests.Serializability;

/// <summary>Proof that the checker works on real executions: with read locks switched off it must find a cycle.</summary>
public sealed class BrokenScheduleTests(UnsafeReadsClusterFixture fixture, ITestOutputHelper output) : IClassFixture<UnsafeReadsClusterFixture>
{
    [Fact]
    public async Task Reads_without_locks_produce_a_cycle_the_checker_reports()
    {
        var shape = new RandomWorkloadShape(HotActors: 2, ColdActors: 4, HotProbability: 0.8, WriteProbability: 0.5, UserAbortProbability: 0);
        var problems = await BrokenRuns.FindProblems(fixture.Client, shape, output);

        // Unlocked reads show up as a cycle, a read that no write order explains, or a lost update (a committed
        // write overwritten by a transaction that read before it): whichever the timing produced.
        Assert.Contains(problems, p => p.Contains("cycle") || p.Contains("no prefix") || p.Contains("is missing"));
    }
}

/// <summary>Proof that the checker catches a broken hybrid schedule: ACTs that skip the serializability check.</summary>
public sealed class BrokenHybridScheduleTests(UnsafeHybridClusterFixture fixture, ITestOutputHelper output) : IClassFixture<UnsafeHybridClusterFixture>
{
    [Fact]
    public async Task Acts_that_skip_the_serializability_check_break_serializability_and_the_checker_reports_it()
    {
        // User aborts make batches abort after ACTs read from them; without the wait for max(BeforeSet) such an
        // ACT commits what it read from the aborted batch.
        Assert.NotEmpty(await BrokenRuns.FindProblems(fixture.Client, BrokenRuns.HybridShape with { UserAbortProbability = 0.1 }, output));
    }
}

/// <summary>Proof that the checker catches a broken hybrid schedule: without the gate between ACTs and batches.</summary>
public sealed class BrokenCommittedBatchesOnlyScheduleTests(UnsafeCommittedBatchesOnlyClusterFixture fixture, ITestOutputHelper output)
    : IClassFixture<UnsafeCommittedBatchesOnlyClusterFixture>
{
    [Fact]
    public async Task Acts_running_over_uncommitted_batches_break_serializability_and_the_checker_reports_it()
    {
        Assert.NotEmpty(await BrokenRuns.FindProblems(fixture.Client, BrokenRuns.HybridShape, output));
    }
}

internal static class BrokenRuns
{
    public static RandomWorkloadShape HybridShape { get; } =
        new(HotActors: 2, ColdActors: 4, HotProbability: 0.8, WriteProbability: 0.7, UserAbortProbability: 0, PactFraction: 0.5);

    /// <summary>
    /// Runs seeded rounds until the checker reports something (or twelve rounds pass): the broken schedules need
    /// an unlucky interleaving, which a loaded machine (CI) produces less often.
    /// </summary>
    public static async Task<IReadOnlyList<string>> FindProblems(IGrainFactory grains, RandomWorkloadShape shape, ITestOutputHelper output)
    {
        IReadOnlyList<string> problems = [];
        for (var round = 0; round < 12 && problems.Count == 0; round++)
        {
            var workload = new RandomHistory(grains, ClusterFixture.NewIds(shape.HotActors + shape.ColdActors)[0], shape);
            var (history, final) = await workload.RunAsync(seed: 100 + round, transactions: 500, concurrency: 16, firstTxnId: (100 + round) * 1_000_000L);
            problems = HistoryChecker.Check(history, final);
            output.WriteLine($"round {round}: {history.Count(t => t.Committed)} committed, {problems.Count} problem(s): {Shorten(problems.FirstOrDefault())}");
        }

        return problems;
    }

    private static string Shorten(string? problem) => problem is null ? "" : problem.Length <= 160 ? problem : problem[..160] + " ...";
}
