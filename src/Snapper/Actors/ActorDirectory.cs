using System.Collections.Concurrent;

namespace Snapper.Actors;

/// <summary>
/// The <see cref="ActorCore{TState}"/> of every transactional actor that has been active in this silo, for as long as
/// the silo runs. Its size is the number of distinct actors, not of transactions: what stays per actor is its
/// committed state (which memory-only mode must keep anyway, having nowhere else to keep it) and an empty schedule.
/// </summary>
internal sealed class ActorDirectory
{
    private readonly ConcurrentDictionary<GrainId, object> _cores = new();

    // Activations that take calls inside transactions directly (SnapperOptions.LocalCalls), each from its first Orleans
    // call into a transaction until its end refuses local calls, at most one per actor: kept on the actor's schedule
    // (ActorSchedule.LocalCallee), found through the PACT service's map of schedules, which never forgets an actor.
    private readonly Pact.PactService _schedules;

    public ActorDirectory(Diagnostics.SnapperMetrics metrics, Pact.PactService schedules)
    {
        _schedules = schedules;
        metrics.ObserveEntries("actors", "Transactional actors with a core in this silo.", () => _cores.Count);
    }

    public int Count => _cores.Count;

    /// <summary>The actor's core, created by <paramref name="create"/> on its first activation in this silo.</summary>
    /// <exception cref="SnapperException">The actor was active here before with a different state type.</exception>
    public ActorCore<TState> GetOrAdd<TState>(GrainId actor, Func<ActorCore<TState>> create) where TState : class
    {
        var core = _cores.GetOrAdd(actor, static (_, create) => create(), create);
        return core as ActorCore<TState> ?? throw new SnapperException(
            $"Actor {actor} was active in this silo with state type {core.GetType().GenericTypeArguments[0].Name}, now with {typeof(TState).Name}.");
    }

    /// <summary>The actors with a core here, as of now.</summary>
    public IReadOnlyCollection<GrainId> Actors => [.. _cores.Keys];

    /// <summary>Whether the actor has a core here (it has been active in this silo).</summary>
    public bool Contains(GrainId actor) => _cores.ContainsKey(actor);

    /// <summary>Forgets an actor whose state moved to another silo.</summary>
    public void Remove(GrainId actor) => _cores.TryRemove(actor, out _);

    /// <summary>Marks <paramref name="activation"/> as the one that takes local calls to <paramref name="actor"/> (see <see cref="ILocalCallee"/>).</summary>
    public void ServeLocalCalls(GrainId actor, ILocalCallee activation) => _schedules.ScheduleOf(actor).ServeLocalCalls(activation);

    /// <summary>Stops sending local calls to <paramref name="activation"/>; a later activation of the actor that took over stays.</summary>
    public void StopLocalCalls(GrainId actor, ILocalCallee activation) => _schedules.ExistingScheduleOf(actor)?.StopLocalCalls(activation);

    /// <summary>The activation of <paramref name="actor"/> in this silo that takes local calls, if there is one.</summary>
    public ILocalCallee? LocalCallee(GrainId actor) => _schedules.ExistingScheduleOf(actor)?.LocalCallee;
}
