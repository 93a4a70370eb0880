using System.Collections.Concurrent;

namespace Snapper.Migration;

/// <summary>
/// States of actors migrating to this worker, as their old worker handed them over (and this silo logged them): the
/// actor's first activation here starts from its entry, before anything recovery read. An entry is taken by that
/// activation, or dropped when the migration is rolled back.
/// </summary>
internal sealed class MigrationInbox
{
    private readonly ConcurrentDictionary<GrainId, MigratedState> _arrived = new();

    public void Put(GrainId actor, MigratedState state) => _arrived[actor] = state;

    public bool TryTake(GrainId actor, out MigratedState state) => _arrived.TryRemove(actor, out state!);

    public void Drop(GrainId actor) => _arrived.TryRemove(actor, out _);
}

/// <summary>
/// An actor's newest committed state as it leaves its worker: Orleans-serialized (for the new activation), as its log
/// record carries it (a key-value actor's whole state, never a change), and the seq of that version.
/// </summary>
[GenerateSerializer, Immutable, Alias("snapper.migration.state")]
internal sealed record MigratedState(
    [property: Id(0)] byte[] State,
    [property: Id(1)] byte[] LogPayload,
    [property: Id(2)] bool Incremental,
    [property: Id(3)] long Seq);
