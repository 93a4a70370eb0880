using System.Collections.Concurrent;

namespace Snapper.Migration;

/// <summary>
/// The actors of this silo's view that are frozen for a migration. While an actor is frozen here: this silo orders no
/// PACT that declares it (local submissions wait, global ones are held by the master), and, on the actor's own worker,
/// the actor admits no new transaction (<see cref="ActorMigratingException"/>), while what it already admitted finishes.
/// </summary>
/// <remarks>
/// Freezing happens under the PACT service's emission lock (see <c>PactService.Freeze</c>), so once a freeze returned no
/// batch that declares the actor can still be emitted by this silo: what was emitted before is in the actor's schedule,
/// and the migration waits for it to commit.
/// </remarks>
internal sealed class MigrationGate
{
    private readonly ConcurrentDictionary<GrainId, Frozen> _frozen = new();

    public bool IsEmpty => _frozen.IsEmpty;

    public bool IsFrozen(GrainId actor) => !_frozen.IsEmpty && _frozen.ContainsKey(actor);

    /// <summary>Whether any of <paramref name="actors"/> is frozen.</summary>
    public bool AnyFrozen(IEnumerable<GrainId> actors)
    {
        if (_frozen.IsEmpty)
        {
            return false;
        }

        foreach (var actor in actors)
        {
            if (_frozen.ContainsKey(actor))
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>
    /// Freezes <paramref name="actor"/> for migration <paramref name="migration"/> of the master process
    /// <paramref name="incarnation"/> (again: nothing changes). A freeze left by an earlier migration whose release never
    /// came is taken over: its waiters look again and wait for this one.
    /// </summary>
    public void Freeze(GrainId actor, Guid migration, Guid incarnation) => _frozen.AddOrUpdate(actor, _ => new Frozen(migration, incarnation), (_, old) =>
    {
        if (old.Migration == migration)
        {
            return old;
        }

        old.Released.TrySetResult();
        return new Frozen(migration, incarnation);
    });

    /// <summary>Releases <paramref name="actor"/> if migration <paramref name="migration"/> froze it; waiters go on.</summary>
    public void Release(GrainId actor, Guid migration)
    {
        if (_frozen.TryGetValue(actor, out var frozen) && frozen.Migration == migration && _frozen.TryRemove(new(actor, frozen)))
        {
            frozen.Released.TrySetResult();
        }
    }

    /// <summary>
    /// The actors frozen by a master process other than <paramref name="incarnation"/>: their helper died with its process,
    /// so their migrations end where the master's directory says.
    /// </summary>
    public IReadOnlyList<(GrainId Actor, Guid Migration)> FrozenByOtherThan(Guid incarnation) =>
        [.. _frozen.Where(e => e.Value.Incarnation != incarnation).Select(e => (e.Key, e.Value.Migration))];

    /// <summary>The actors frozen for longer than <paramref name="age"/>, with the migration that froze each.</summary>
    public IReadOnlyList<(GrainId Actor, Guid Migration)> FrozenLongerThan(TimeSpan age) =>
        [.. _frozen.Where(e => Environment.TickCount64 - e.Value.Since > (long)age.TotalMilliseconds).Select(e => (e.Key, e.Value.Migration))];

    /// <summary>Completes when none of <paramref name="actors"/> is frozen; false if one still is after <paramref name="bound"/>.</summary>
    public async Task<bool> WhenReleasedAsync(IEnumerable<GrainId> actors, TimeSpan bound)
    {
        var deadline = Environment.TickCount64 + (long)bound.TotalMilliseconds;
        foreach (var actor in actors)
        {
            while (_frozen.TryGetValue(actor, out var frozen))
            {
                var left = deadline - Environment.TickCount64;
                if (left <= 0)
                {
                    return false;
                }

                try
                {
                    await frozen.Released.Task.WaitAsync(TimeSpan.FromMilliseconds(left));
                }
                catch (TimeoutException)
                {
                    return false;
                }
            }
        }

        return true;
    }

    private sealed class Frozen(Guid migration, Guid incarnation)
    {
        public Guid Migration { get; } = migration;

        public Guid Incarnation { get; } = incarnation;

        public long Since { get; } = Environment.TickCount64;

        public TaskCompletionSource Released { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);
    }
}
