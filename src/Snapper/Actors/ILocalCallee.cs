namespace Snapper.Actors;

/// <summary>
/// A transactional actor's activation that takes calls inside transactions, and an ACT's prepare and commit, from actors
/// of the same silo directly (<see cref="Hosting.SnapperOptions.LocalCalls"/>), registered in the silo's
/// <see cref="ActorDirectory"/>. Each method returns null once the activation's end refuses local calls; the sender then
/// uses the Orleans message
/// (<see cref="SnapperRuntime.SendCall"/>, <see cref="SnapperRuntime.SendPrepare"/>, <see cref="SnapperRuntime.SendCommit"/>).
/// </summary>
internal interface ILocalCallee
{
    /// <summary>
    /// Starts <paramref name="request"/> on this activation's task scheduler and returns its response; null if the
    /// activation's end refuses local calls by now (the caller then sends an Orleans call, which reaches the next
    /// activation). Called on the caller's thread.
    /// </summary>
    Task<CallResponse>? TryCallLocal(CallRequest request);

    /// <summary>An ACT's prepare (phase one of 2PC) for this actor, as <see cref="TryCallLocal"/> starts a call.</summary>
    Task<Act.PrepareResult>? TryPrepareLocal(Act.ActPhaseRequest request);

    /// <summary>An ACT's commit (phase two of 2PC) for this actor, as <see cref="TryCallLocal"/> starts a call.</summary>
    Task? TryCommitLocal(Act.ActPhaseRequest request);
}
