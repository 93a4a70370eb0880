using System.Runtime.InteropServices;
using Snapper.Scheduling;

namespace Snapper.Pact;

/// <summary>
/// Groups the accesses of the batch being emitted by actor, one sub-batch per actor in first-declared order, and keeps
/// its storage from one batch to the next.
/// </summary>
/// <remarks>
/// One builder lives on the ring's token and only the token holder uses it: emissions never overlap, and handing the
/// token to the next visitor (through the thread pool, or parking it with a full fence) publishes what this one wrote.
/// A schedule reads a sub-batch's accesses only while <see cref="ActorSchedule.Deliver"/> runs and keeps none of them, so
/// the lists can be cleared and filled again for the next batch. Reusing them saves, per emitted batch, a dictionary and
/// a list per participant (about 0.7 KB per PACT of SmallBank's MultiTransfer, five actors each).
/// </remarks>
internal sealed class SubBatchBuilder
{
    // Beyond this many actors in one batch, the storage is let go after the batch instead of being kept: clearing the
    // index costs as much as its largest use, and one exceptional batch should not tax every later one.
    private const int KeptActors = 1_024;

    private Dictionary<GrainId, int> _index = new();
    private readonly List<GrainId> _actors = new();
    private readonly List<List<PactAccess>> _accesses = new();
    private readonly List<ActorSchedule?> _schedules = new();

    /// <summary>Actors in the batch so far.</summary>
    public int Count => _actors.Count;

    /// <summary>The actor of sub-batch <paramref name="index"/>.</summary>
    public GrainId ActorAt(int index) => _actors[index];

    /// <summary>The PACT accesses of sub-batch <paramref name="index"/>, in the order they were added (valid until <see cref="Clear"/>).</summary>
    public IReadOnlyList<PactAccess> AccessesAt(int index) => _accesses[index];

    /// <summary>The schedule of sub-batch <paramref name="index"/>'s actor, if the caller that added it knew it.</summary>
    public ActorSchedule? ScheduleAt(int index) => _schedules[index];

    /// <summary>Adds one PACT's declared access to <paramref name="actor"/>'s sub-batch (with the actor's schedule, if known).</summary>
    public void Add(GrainId actor, PactAccess access, ActorSchedule? schedule = null)
    {
        ref var slot = ref CollectionsMarshal.GetValueRefOrAddDefault(_index, actor, out var exists);
        if (!exists)
        {
            slot = _actors.Count;
            _actors.Add(actor);
            _schedules.Add(schedule);
            if (_accesses.Count <= slot)
            {
                _accesses.Add(new List<PactAccess>(1));
            }
        }

        _accesses[slot].Add(access);
    }

    /// <summary>The batch's participants, in sub-batch order (a new array: the batch keeps it).</summary>
    public GrainId[] Participants() => [.. _actors];

    /// <summary>Empties the builder for the next batch.</summary>
    public void Clear()
    {
        if (_actors.Count > KeptActors)
        {
            _index = new();
            _actors.Clear();
            _actors.TrimExcess();
            _accesses.Clear();
            _accesses.TrimExcess();
            _schedules.Clear();
            _schedules.TrimExcess();
            return;
        }

        for (var i = 0; i < _actors.Count; i++)
        {
            _accesses[i].Clear(); // drops the key sets it referenced
        }

        _index.Clear();
        _actors.Clear();
        _schedules.Clear();
    }
}
