using Xunit;
using Xunit.Abstractions;

namespace Snapper.Tests.Serializability;

/// <summary>
/// Randomized workloads, pure ACT, pure PACT and hybrid mixes, checked for conflict serializability. Seeded: a
/// failure names its seed.
/// </summary>
[Collection(ClusterCollection.Name)]
public sealed class RandomizedHistoryTests(ClusterFixture fixture, ITestOutputHelper output)
{
    [Theory]
    [InlineData(11)]
    [InlineData(12)]
    public Task Random_acts_over_hot_and_cold_actors_are_serializable(int seed) =>
        RandomRuns.RunAndCheck(fixture.Client, output, seed, RandomRuns.Scaled(new RandomWorkloadShape()));

    [Theory]
    [InlineData(21)]
    [InlineData(22)]
    public Task Random_pacts_over_hot_and_cold_actors_are_serializable(int seed) =>
        RandomRuns.RunAndCheck(fixture.Client, output, seed, RandomRuns.Scaled(new RandomWorkloadShape(PactFraction: 1, UserAbortProbability: 0.01)));

    [Theory]
    [InlineData(31, 0.5)]
    [InlineData(32, 0.9)]
    public Task Random_hybrid_mixes_are_serializable(int seed, double pactFraction) =>
        RandomRuns.RunAndCheck(fixture.Client, output, seed, RandomRuns.Hybrid(pactFraction));

    /// <summary>The same over the keys of key-value actors (four keys per actor): ACTs, PACTs and hybrid mixes.</summary>
    [Theory]
    [InlineData(51, 0.0)]
    [InlineData(52, 1.0)]
    [InlineData(53, 0.5)]
    [InlineData(54, 0.9)]
    public Task Random_key_value_histories_are_serializable(int seed, double pactFraction) =>
        RandomRuns.RunAndCheck(fixture.Client, output, seed, RandomRuns.Hybrid(pactFraction) with { Keyed = true });

    /// <summary>The same with each key replicated on another actor by an update dependency, some reads reading the replica.</summary>
    [Theory]
    [InlineData(55, 0.0)]
    [InlineData(56, 1.0)]
    [InlineData(57, 0.9)]
    public Task Random_key_value_histories_with_replicated_keys_are_serializable(int seed, double pactFraction) =>
        RandomRuns.RunAndCheck(fixture.Client, output, seed, RandomRuns.Hybrid(pactFraction) with { Keyed = true, Mirrored = true });

    /// <summary>
    /// The same on actors with key-level concurrency control, PACTs declaring the keys they use: keyed batches run side
    /// by side on an actor, and the checker still finds one serial order per key.
    /// </summary>
    [Theory]
    [InlineData(61, 1.0, false)]
    [InlineData(62, 0.9, false)]
    [InlineData(63, 1.0, true)]
    [InlineData(64, 0.5, true)]
    [InlineData(65, 0.0, false)]
    [InlineData(66, 0.0, true)]
    public Task Random_key_level_histories_are_serializable(int seed, double pactFraction, bool mirrored) =>
        RandomRuns.RunAndCheck(fixture.Client, output, seed, RandomRuns.Hybrid(pactFraction) with { Keyed = true, Mirrored = mirrored, KeyLevel = true });
}

/// <summary>
/// Hybrid mixes on a silo that logs: ACTs commit over batches whose commit records are queued and not yet durable, and
/// their installs fold those batches' versions. A version folded wrongly shows as a lost write in a later read.
/// </summary>
public sealed class LoggedHistoryTests(LoggedClusterFixture fixture, ITestOutputHelper output) : IClassFixture<LoggedClusterFixture>
{
    [Theory]
    [InlineData(71, 0.5)]
    [InlineData(72, 0.9)]
    public Task Random_hybrid_mixes_are_serializable(int seed, double pactFraction) =>
        RandomRuns.RunAndCheck(fixture.Client, output, seed, RandomRuns.Hybrid(pactFraction));

    [Theory]
    [InlineData(73, 0.9, false)]
    [InlineData(74, 0.9, true)]
    public Task Random_key_value_hybrid_mixes_are_serializable(int seed, double pactFraction, bool keyLevel) =>
        RandomRuns.RunAndCheck(fixture.Client, output, seed, RandomRuns.Hybrid(pactFraction) with { Keyed = true, KeyLevel = keyLevel });
}

/// <summary>The hybrid mixes again under the stricter rule, <see cref="Hosting.HybridScheduling.CommittedBatchesOnly"/>.</summary>
public sealed class CommittedBatchesOnlyHistoryTests(CommittedBatchesOnlyClusterFixture fixture, ITestOutputHelper output)
    : IClassFixture<CommittedBatchesOnlyClusterFixture>
{
    [Theory]
    [InlineData(41, 0.5)]
    [InlineData(42, 0.9)]
    public Task Random_hybrid_mixes_are_serializable(int seed, double pactFraction) =>
        RandomRuns.RunAndCheck(fixture.Client, output, seed, RandomRuns.Hybrid(pactFraction));
}

internal static class RandomRuns
{
    /// <summary>The history transactions a checker's problem names as ACTs.</summary>
    private static IEnumerable<long> NamedAct(string problem) =>
        System.Text.RegularExpressions.Regex.Matches(problem, @"\bACT (\d+)").Select(m => long.Parse(m.Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture));

    /// <summary>Transactions per run in CI; SNAPPER_CHECKER_TXNS raises it for a long run (e.g. 100000).</summary>
    public static int Transactions => int.TryParse(Environment.GetEnvironmentVariable("SNAPPER_CHECKER_TXNS"), out var n) ? n : 2_000;


    public static RandomWorkloadShape Hybrid(double pactFraction) =>
        Scaled(new RandomWorkloadShape(PactFraction: pactFraction, UserAbortProbability: 0.02));

    /// <summary>
    /// Long runs spread over more actors: every access returns the actor's whole write list, so the cost per
    /// access grows with the writes an actor has seen. At the CI size the shape is unchanged (4 hot, 40 cold).
    /// </summary>
    public static RandomWorkloadShape Scaled(RandomWorkloadShape shape) => shape with
    {
        HotActors = Math.Max(shape.HotActors, Transactions / 500),
        ColdActors = Math.Max(shape.ColdActors, Transactions / 50),
    };

    /// <summary>
    /// Runs a seeded random workload of <see cref="Transactions"/> transactions and checks its history; with
    /// <paramref name="alongside"/>, that runs beside it (given the hot actors' ids) until the workload ends and is
    /// cancelled then: live migrations of those actors, for one. Returns how many transactions aborted for each reason.
    /// </summary>
    public static async Task<IReadOnlyDictionary<AbortReason, int>> RunAndCheck(IGrainFactory grains, ITestOutputHelper output, int seed, RandomWorkloadShape shape,
        Func<long[], CancellationToken, Task>? alongside = null)
    {
        var first = ClusterFixture.NewIds(shape.HotActors + shape.ColdActors)[0] + (shape.KeyLevel ? KeyedHistoryActor.KeyLevelTargets : 0);
        var workload = new RandomHistory(grains, first, shape);

        using var ended = new CancellationTokenSource();
        var run = workload.RunAsync(seed, Transactions, concurrency: 16, firstTxnId: seed * 1_000_000L);
        var beside = alongside?.Invoke([.. workload.Actors.Take(shape.HotActors)], ended.Token) ?? Task.CompletedTask;
        var (history, final) = await run;
        await ended.CancelAsync();
        await beside;

        var committed = history.Count(t => t.Committed);
        output.WriteLine($"seed {seed}: {committed} committed, {history.Count - committed} aborted of {history.Count} ({string.Join(", ", workload.AbortReasons.Select(r => $"{r.Key} {r.Value}"))})");
        foreach (var (_, abort) in workload.BlamingTheCode)
        {
            output.WriteLine($"first {abort.Reason} abort: {abort}");
        }

        Assert.Equal(Transactions, history.Count);
        Assert.True(committed > Transactions / 5, $"seed {seed}: only {committed} committed");
        var problems = HistoryChecker.Check(history, final);
        foreach (var problem in problems.Take(20))
        {
            output.WriteLine(problem);
        }

        // What Snapper did with the ACTs the problems name, where their silos were followed (see ActTraces).
        foreach (var txn in problems.Take(20).SelectMany(NamedAct).Distinct().Take(5))
        {
            output.WriteLine($"steps of ACT {txn}:");
            foreach (var step in ActTraces.Of(txn))
            {
                output.WriteLine(step);
            }
        }

        ActTraces.Forget(history.Select(t => t.Id));
        Assert.Empty(problems);
        foreach (var id in final.Keys.Where(id => shape.Mirrored && id < RandomHistory.MirrorOffset))
        {
            Assert.True(final[id].SequenceEqual(final[id + RandomHistory.MirrorOffset]), $"seed {seed}: the replica of {id} holds other writers than its key");
        }

        return workload.AbortReasons;
    }
}
