using Snapper.Hosting;
using Xunit;
using Xunit.Abstractions;

namespace Snapper.Tests.Cluster;

/// <summary>Stages a migration with <see cref="SnapperTestHooks.AfterMigrationFreeze"/>.</summary>
internal static class MigrationHooks
{
    /// <summary>
    /// Holds the next migration of <paramref name="actor"/> once every worker froze it: <c>Frozen</c> completes then, and
    /// the migration goes on when the test completes <c>Release</c> (and clears the hook); left incomplete, the helper
    /// never goes on (a test that kills the master).
    /// </summary>
    public static (TaskCompletionSource Frozen, TaskCompletionSource Release) HoldAfterFreeze(this SnapperTestHooks hooks, GrainId actor)
    {
        var frozen = new TaskCompletionSource();
        var release = new TaskCompletionSource();
        hooks.AfterMigrationFreeze = moving =>
        {
            if (moving != actor)
            {
                return null;
            }

            frozen.TrySetResult();
            return release.Task;
        };
        return (frozen, release);
    }
}

/// <summary>Live migrations running beside a workload.</summary>
internal static class MigrationLoad
{
    /// <summary>
    /// Moves each of <paramref name="actors"/> to the other worker, again and again, until <paramref name="ended"/>; with
    /// <paramref name="rollbacksAllowed"/>, a migration rolled back (a bound fired while it moved) is counted, not a failure.
    /// </summary>
    public static async Task MoveBackAndForthAsync(IGrainFactory grains, ITestOutputHelper output, ITransactionalActor[] actors, int seed,
        CancellationToken ended, bool rollbacksAllowed = false)
    {
        // At least one pass over the actors, however soon the workload ends: what the assertions below count does not
        // depend on how long the workload ran.
        var (moves, rolledBack) = (0, 0);
        do
        {
            foreach (var actor in actors)
            {
                try
                {
                    await grains.MigrateAsync(actor, 1 - await grains.WorkerOfAsync(actor));
                    moves++;
                }
                catch (MigrationException) when (rollbacksAllowed)
                {
                    rolledBack++;
                }

                // A pause between moves, so that an actor moved again at once is not frozen for most of the run (its
                // transactions would only be resubmitted, which this test is not about).
                await Task.Delay(20, CancellationToken.None);
            }
        }
        while (!ended.IsCancellationRequested);

        output.WriteLine($"seed {seed}: {moves} migrations of {actors.Length} actors during the run, {rolledBack} rolled back");
        if (!rollbacksAllowed)
        {
            Assert.True(moves >= actors.Length);
        }
    }
}
