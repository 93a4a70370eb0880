using Snapper.Tests.Actors;
using Xunit;

namespace Snapper.Tests;

/// <summary>
/// Opt-in retries (<see cref="RetryPolicy"/>): a transaction that aborted for a transient reason runs again as a new
/// transaction and commits once; a final abort is thrown at once; a policy that runs out throws the last abort.
/// </summary>
[Collection(ClusterCollection.Name)]
public sealed class RetryTests(ClusterFixture fixture)
{
    private IKeyedShelf Shelf() => fixture.Client.GetGrain<IKeyedShelf>(ClusterFixture.NewId());

    [Fact]
    public async Task An_act_that_dies_under_contention_is_retried_and_commits_exactly_once()
    {
        var shelf = Shelf();
        var hold = $"retry-hold-{Guid.NewGuid()}";
        var older = shelf.StartTxn(shelf.Write, new ShelfWrite("a", 10, hold));
        await Gates.WhenReached(hold);

        // The younger ACT wants the key the older one holds: it dies (wait-die) until the older one lets go, which it
        // does when the first retry is announced; each attempt is a new transaction, and only the last commits.
        var retries = new List<(AbortReason Reason, int Attempts, long Tid)>();
        var policy = new RetryPolicy
        {
            MaxAttempts = 100,
            OnRetry = (abort, attempts) =>
            {
                lock (retries)
                {
                    retries.Add((abort.Reason, attempts, abort.Tid));
                }

                Gates.Release(hold);
            },
        };
        await shelf.StartTxn(shelf.Write, new ShelfWrite("a", 1), policy);
        await older;

        Assert.NotEmpty(retries);
        Assert.All(retries, retry => Assert.Equal(AbortReason.WaitDie, retry.Reason));
        Assert.Equal(Enumerable.Range(1, retries.Count), retries.Select(r => r.Attempts));
        Assert.Equal(retries.Count, retries.Select(r => r.Tid).Distinct().Count());
        Assert.Equal(11, await shelf.StartTxn(shelf.Count, "a"));
    }

    [Fact]
    public async Task A_final_abort_is_not_retried_and_a_policy_that_runs_out_throws_the_last_abort()
    {
        var shelf = Shelf();
        var retried = 0;
        var policy = new RetryPolicy { MaxAttempts = 3, OnRetry = (_, _) => Interlocked.Increment(ref retried) };
        var failed = await Assert.ThrowsAsync<TransactionAbortedException>(() => shelf.StartTxn(shelf.Write, new ShelfWrite("a", 1, ThenFail: true), policy));
        Assert.Equal(AbortReason.UserException, failed.Reason);
        Assert.False(failed.IsTransient);
        Assert.Equal(0, retried);

        var hold = $"retry-out-{Guid.NewGuid()}";
        var older = shelf.StartTxn(shelf.Write, new ShelfWrite("b", 5, hold));
        await Gates.WhenReached(hold);
        var exhausted = await Assert.ThrowsAsync<TransactionAbortedException>(() => shelf.StartTxn(shelf.Write, new ShelfWrite("b", 1), policy));
        Assert.Equal(AbortReason.WaitDie, exhausted.Reason);
        Assert.True(exhausted.IsTransient);
        Assert.Equal(2, retried);

        Gates.Release(hold);
        await older;
        Assert.Equal(new Dictionary<string, int> { ["b"] = 5 }, await shelf.StartTxn(shelf.All, 0));
    }

    [Fact]
    public void Backoff_stays_within_its_doubling_bound_and_its_maximum()
    {
        var policy = new RetryPolicy { InitialBackoff = TimeSpan.FromMilliseconds(4), MaxBackoff = TimeSpan.FromMilliseconds(20) };
        for (var i = 0; i < 200; i++)
        {
            Assert.InRange(policy.Backoff(1), TimeSpan.Zero, TimeSpan.FromMilliseconds(4));
            Assert.InRange(policy.Backoff(2), TimeSpan.Zero, TimeSpan.FromMilliseconds(8));
            Assert.InRange(policy.Backoff(40), TimeSpan.Zero, TimeSpan.FromMilliseconds(20));
        }

        Assert.True(AbortReason.HybridDeadlock.IsTransient());
        Assert.False(AbortReason.UndeclaredAccess.IsTransient());
        Assert.False(AbortReason.InvalidCall.IsTransient());
    }
}
