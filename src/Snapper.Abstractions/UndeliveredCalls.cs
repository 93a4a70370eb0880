namespace Snapper;

/// <summary>
/// The failures by which Orleans reports a call it never delivered to an activation of its grain while that grain's
/// activation was moving: the call never ran, so the transaction it belongs to may be submitted again.
/// </summary>
internal static class UndeliveredCalls
{
    /// <summary>Whether <paramref name="exception"/> says that Orleans gave up delivering a call to a moving activation.</summary>
    public static bool WhileMoving(Exception exception) => exception switch
    {
        // Forwarded too often while the activation moved between silos ("Forwarding failed: ..."); a rejection by a
        // silo that is down is not one of these.
        OrleansMessageRejectionException rejected =>
            rejected is not SiloUnavailableException && rejected.Message.StartsWith("Forwarding failed", StringComparison.Ordinal),

        // Orleans places a grain once for every message waiting for it, and if the first of them outlived its time to
        // live meanwhile, it fails all of them, none delivered. Seen (once, under load) while hot actors moved back and
        // forth: a message held for the old activation to finish its deactivation, then waiting for the new placement.
        OperationCanceledException cancelled =>
            cancelled.Message.StartsWith("Message expired before placement could complete", StringComparison.Ordinal),

        _ => false,
    };
}
