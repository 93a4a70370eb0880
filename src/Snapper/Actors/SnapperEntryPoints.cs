using System.Reflection;
using Snapper.Act;

namespace Snapper.Actors;

/// <summary>
/// The grain interfaces of a transactional actor that only Snapper may call, from inside a silo: joining a transaction
/// (<see cref="IActorCallee"/>), two-phase commit (<see cref="IActParticipant"/>) and migration
/// (<see cref="Migration.IMigratingActor"/>). A client that called them could hold a lock, decide an outcome or take an
/// actor's state; <see cref="TransactionalActor{TState}"/>'s call filter refuses such calls.
/// </summary>
internal static class SnapperEntryPoints
{
    public static bool IsInternal(MethodInfo? method) =>
        method?.DeclaringType is { } type && (type == typeof(IActorCallee) || type == typeof(IActParticipant) || type == typeof(Migration.IMigratingActor));

    /// <summary>
    /// Whether a call came from inside a silo of the cluster: from a grain, or from a silo's runtime outside any grain
    /// (Orleans gives such calls the silo's hosted client as sender, "hosted-" followed by the silo address).
    /// </summary>
    public static bool IsFromSilo(GrainId? source) =>
        source is { } id && (!id.IsClient() || id.Key.ToString().StartsWith("hosted-", StringComparison.Ordinal));
}
