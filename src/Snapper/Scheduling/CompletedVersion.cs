using Snapper.Logging;

namespace Snapper.Scheduling;

/// <summary>
/// What a sub-batch that completed on an actor left for the log: its new state in log form (null if it took no copy,
/// or the silo does not log) with its seq, or the exception that turning the state into log form threw; and the actor's
/// name as its log records carry it (made once per actor, not once per record).
/// </summary>
/// <remarks>
/// The log form is taken under the schedule's lock, as the sub-batch completes: the object a batch left may become the
/// working state of the next batch on the actor, which changes it in place (see <see cref="StateVersions{TState}"/>),
/// so it is serialized before anything can run on it again.
/// </remarks>
internal readonly record struct CompletedVersion(LoggedState? State, long Seq, Exception? LogFailure = null, string? Actor = null);
