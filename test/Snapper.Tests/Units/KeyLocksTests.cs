using Snapper.Act;
using Xunit;

namespace Snapper.Tests.Units;

/// <summary>A key-level actor's key locks without a silo: made on demand, dropped once nobody holds or waits.</summary>
public sealed class KeyLocksTests
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(5);

    [Fact]
    public async Task A_key_lock_lives_while_someone_holds_or_waits_for_it_and_is_dropped_after()
    {
        var locks = new KeyLocks();
        await locks.Of("a").AcquireAsync(5, AccessMode.ReadWrite, Bound);
        await locks.Of("b").AcquireAsync(6, AccessMode.ReadWrite, Bound);
        Assert.Equal(2, locks.Count);

        // An older transaction waits for key a; a younger one asking for it dies and leaves nothing behind.
        var older = locks.Of("a").AcquireAsync(1, AccessMode.ReadWrite, Bound);
        Assert.Equal(AbortReason.WaitDie, (await Assert.ThrowsAsync<TransactionAbortedException>(() => locks.Of("a").AcquireAsync(9, AccessMode.Read, Bound))).Reason);
        locks.Release(9, null, ["a"]);

        // Releasing the holder of a hands it to the waiter (the lock stays); releasing b drops b's lock.
        locks.Release(5, null, ["a"]);
        locks.Release(6, null, ["b"]);
        await older;
        Assert.Equal(1, locks.Count);
        Assert.True(locks.Of("a").Holds(1, AccessMode.ReadWrite));

        locks.Release(1, null, ["a", "never-asked"]);
        Assert.Equal(0, locks.Count);
    }
}
