using Snapper.Hosting;

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
