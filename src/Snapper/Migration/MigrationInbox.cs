using System.Collections.Concurrent;

namespace Snapper.Migration;

/// <summary>
/// States of actors migrating to this worker, as their old worker handed them over (and this silo logged them): the
/// actor's first activation here starts from its entry, before anything recovery read. An entry is taken by that
/// activation, or dropped when the migration is rolled back.
/// </summary>
internal sealed class MigrationInbox
{
    private readonly ConcurrentDictionary<GrainId, (Guid Migration, MigratedState State)> _arrived = new();

    // Migrations rolled back, newest last, so that an acceptance that finishes after its rollback keeps nothing.
    private readonly Queue<Guid> _dropped = new();
    private readonly object _gate = new();

    public void Put(GrainId actor, Guid migration, MigratedState state)
    {
        lock (_gate)
        {
            if (!_dropped.Contains(migration))
            {
                _arrived[actor] = (migration, state);
            }
        }
    }

    public bool TryTake(GrainId actor, out MigratedState state)
    {
        var taken = _arrived.TryRemove(actor, out var entry);
        state = entry.State;
        return taken;
    }

    /// <summary>Forgets the state of <paramref name="actor"/> (its activation started from another source).</summary>
    public void Forget(GrainId actor) => _arrived.TryRemove(actor, out _);

    /// <summary>Migration <paramref name="migration"/> was rolled back: its state is not kept, now or if it arrives later.</summary>
    public void Drop(GrainId actor, Guid migration)
    {
        lock (_gate)
        {
            _dropped.Enqueue(migration);
            if (_dropped.Count > 256)
            {
                _dropped.Dequeue();
            }

            if (_arrived.TryGetValue(actor, out var entry) && entry.Migration == migration)
            {
                _arrived.TryRemove(actor, out _);
            }
        }
    }
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
