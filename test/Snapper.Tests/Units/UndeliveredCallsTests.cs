using Orleans.Runtime;
using Xunit;

namespace Snapper.Tests.Units;

/// <summary>
/// Which Orleans failures <c>StartTxn</c> and a transaction's calls treat as a call never delivered to a moving actor
/// (submitted again, or aborted as <see cref="AbortReason.ActorMigrating"/>), and which they leave alone.
/// </summary>
public sealed class UndeliveredCallsTests
{
    // A call forwarded too often ("Forwarding failed", an OrleansMessageRejectionException, which only Orleans makes) is
    // met by the migration tests under load.
    [Fact]
    public void A_call_failed_at_placement_was_never_delivered()
    {
        Assert.True(UndeliveredCalls.WhileMoving(new OperationCanceledException("Message expired before placement could complete for grain historyactor/9DD.")));
    }

    [Fact]
    public void A_silo_that_is_down_a_cancellation_or_a_user_exception_is_not_a_move()
    {
        Assert.False(UndeliveredCalls.WhileMoving(new SiloUnavailableException("Forwarding failed: the silo is down")));
        Assert.False(UndeliveredCalls.WhileMoving(new OperationCanceledException("The operation was canceled.")));
        Assert.False(UndeliveredCalls.WhileMoving(new TaskCanceledException()));
        Assert.False(UndeliveredCalls.WhileMoving(new InvalidOperationException("Message expired before placement could complete")));
    }
}
