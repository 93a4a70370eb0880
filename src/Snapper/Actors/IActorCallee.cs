namespace Snapper.Actors;

/// <summary>
/// Snapper's entry point for a call inside a running transaction (what <c>CallActor</c> sends). Internal, and refused
/// when its request does not carry the stamp of a silo (see <see cref="SiloCallKeys"/>): only transactional actors join
/// a transaction on another actor.
/// </summary>
internal interface IActorCallee : IGrain
{
    /// <summary>
    /// Runs one method of a transaction that is already running. A value task: a callee's method usually finishes
    /// before it returns, and then neither side allocates a task for the call.
    /// </summary>
    ValueTask<CallResponse> ExecuteCall(CallRequest request);
}
