using Snapper.Act;
using Xunit;

namespace Snapper.Tests;

/// <summary>The lock on its own, without a silo.</summary>
public sealed class WaitDieLockTests
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(5);

    [Fact]
    public async Task Readers_share_and_a_writer_waits_only_if_older()
    {
        var lck = new WaitDieLock();
        await lck.AcquireAsync(5, AccessMode.Read, Bound);
        await lck.AcquireAsync(6, AccessMode.Read, Bound);

        var younger = await Assert.ThrowsAsync<TransactionAbortedException>(() => lck.AcquireAsync(7, AccessMode.ReadWrite, Bound));
        Assert.Equal(AbortReason.WaitDie, younger.Reason);

        var older = lck.AcquireAsync(1, AccessMode.ReadWrite, Bound);
        Assert.False(older.IsCompleted);
        lck.Release(5);
        Assert.False(older.IsCompleted);
        lck.Release(6);
        await older;
        Assert.True(lck.Holds(1, AccessMode.ReadWrite));
    }

    [Fact]
    public async Task A_new_waiter_must_be_older_than_every_queued_waiter()
    {
        var lck = new WaitDieLock();
        await lck.AcquireAsync(10, AccessMode.ReadWrite, Bound);
        var second = lck.AcquireAsync(8, AccessMode.ReadWrite, Bound);

        // 9 is older than the holder but younger than the waiter 8: waiting would be young-waits-for-old.
        var abort = await Assert.ThrowsAsync<TransactionAbortedException>(() => lck.AcquireAsync(9, AccessMode.Read, Bound));
        Assert.Equal(AbortReason.WaitDie, abort.Reason);
        var third = lck.AcquireAsync(3, AccessMode.Read, Bound);

        lck.Release(10);
        await second;
        Assert.False(third.IsCompleted);
        lck.Release(8);
        await third;
    }

    [Fact]
    public async Task Upgrade_from_read_to_write()
    {
        var lck = new WaitDieLock();
        await lck.AcquireAsync(2, AccessMode.Read, Bound);
        await lck.AcquireAsync(2, AccessMode.ReadWrite, Bound);
        Assert.True(lck.Holds(2, AccessMode.ReadWrite));

        var other = new WaitDieLock();
        await other.AcquireAsync(2, AccessMode.Read, Bound);
        await other.AcquireAsync(3, AccessMode.Read, Bound);
        var upgrade = other.AcquireAsync(2, AccessMode.ReadWrite, Bound);
        var dies = await Assert.ThrowsAsync<TransactionAbortedException>(() => other.AcquireAsync(3, AccessMode.ReadWrite, Bound));
        Assert.Equal(AbortReason.WaitDie, dies.Reason);
        other.Release(3);
        await upgrade;
        Assert.True(other.Holds(2, AccessMode.ReadWrite));
    }

    [Fact]
    public async Task A_wait_ends_at_its_bound_and_leaves_the_queue()
    {
        var lck = new WaitDieLock();
        await lck.AcquireAsync(10, AccessMode.ReadWrite, Bound);

        var abort = await Assert.ThrowsAsync<TransactionAbortedException>(() => lck.AcquireAsync(1, AccessMode.ReadWrite, TimeSpan.FromMilliseconds(50)));

        Assert.Equal(AbortReason.LockTimeout, abort.Reason);
        Assert.Equal(0, lck.WaiterCount);
    }

    [Fact]
    public async Task A_request_behind_one_of_its_own_transaction_that_timed_out_fails_with_it()
    {
        var lck = new WaitDieLock();
        await lck.AcquireAsync(10, AccessMode.ReadWrite, Bound);

        // Two parallel calls of transaction 1 on this actor: the second waits for the first request.
        var first = lck.AcquireAsync(1, AccessMode.ReadWrite, TimeSpan.FromMilliseconds(50));
        var second = lck.AcquireAsync(1, AccessMode.ReadWrite, Bound);
        Assert.Equal(AbortReason.LockTimeout, (await Assert.ThrowsAsync<TransactionAbortedException>(() => first)).Reason);

        // Before, nothing completed the first request once it left the queue, and the second waited for ever (the guard
        // below only keeps a regression from hanging the run; the second ends as soon as the first did).
        var abort = await Assert.ThrowsAsync<TransactionAbortedException>(() => second.WaitAsync(Bound));
        Assert.Equal(AbortReason.LockTimeout, abort.Reason);
        Assert.Equal(1, abort.Tid);
        Assert.Equal(0, lck.WaiterCount);
        Assert.True(lck.Holds(10, AccessMode.ReadWrite));
    }

    [Fact]
    public Task A_request_behind_one_of_its_own_is_not_granted_once_its_transaction_ended() => OnOneTurnAtATime(async () =>
    {
        var lck = new WaitDieLock();
        await lck.AcquireAsync(10, AccessMode.ReadWrite, Bound);
        var first = lck.AcquireAsync(1, AccessMode.ReadWrite, Bound);
        var second = lck.AcquireAsync(1, AccessMode.ReadWrite, Bound);

        // In one turn, as an actor would: the holder ends and grants the first request, then transaction 1 ends (its
        // abort arrived) before the second request's continuation runs.
        lck.Release(10);
        lck.Release(1);

        await first;
        await Assert.ThrowsAsync<TransactionAbortedException>(() => second);
        Assert.Equal(0, lck.HolderCount);
        Assert.Equal(0, lck.WaiterCount);
    });

    /// <summary>Runs <paramref name="body"/> and every continuation of it one at a time, as an actor's turns run.</summary>
    private static Task OnOneTurnAtATime(Func<Task> body) =>
        Task.Factory.StartNew(body, CancellationToken.None, TaskCreationOptions.None, new ConcurrentExclusiveSchedulerPair().ExclusiveScheduler).Unwrap();

    [Fact]
    public async Task Releasing_a_transaction_fails_its_pending_request()
    {
        var lck = new WaitDieLock();
        await lck.AcquireAsync(10, AccessMode.ReadWrite, Bound);
        var waiting = lck.AcquireAsync(1, AccessMode.ReadWrite, Bound);

        lck.Release(1, new TransactionAbortedException(1, AbortReason.PrepareFailed, "aborted elsewhere"));

        var abort = await Assert.ThrowsAsync<TransactionAbortedException>(() => waiting);
        Assert.Equal(AbortReason.PrepareFailed, abort.Reason);
        Assert.Equal(1, lck.HolderCount);
    }

    [Fact]
    public async Task Nobody_waits_for_a_holder_that_waits_for_pact_batches()
    {
        var lck = new WaitDieLock();
        await lck.AcquireAsync(10, AccessMode.ReadWrite, Bound);
        var queued = lck.AcquireAsync(4, AccessMode.Read, Bound);
        Assert.False(queued.IsCompleted);

        lck.HolderWaitsForBatches(10);

        Assert.Equal(AbortReason.HybridDeadlock, (await Assert.ThrowsAsync<TransactionAbortedException>(() => queued)).Reason);
        var older = await Assert.ThrowsAsync<TransactionAbortedException>(() => lck.AcquireAsync(2, AccessMode.ReadWrite, Bound));
        Assert.Equal(AbortReason.HybridDeadlock, older.Reason);

        lck.Release(10);
        await lck.AcquireAsync(2, AccessMode.ReadWrite, Bound); // waits are allowed again once it released
    }
}
