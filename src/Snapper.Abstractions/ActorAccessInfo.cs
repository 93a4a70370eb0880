namespace Snapper;

/// <summary>
/// The accesses a PACT declares before it runs: each actor it touches and how many times it calls it
/// (thesis §3.2.1), the first actor's own call included. Built with <see cref="Add(IAddressable, int)"/> or
/// <see cref="Add(GrainId, int)"/>, or <see cref="Of(IAddressable[])"/> for the common case of one access per actor.
/// </summary>
[GenerateSerializer, Alias("snapper.access-info")]
public sealed class ActorAccessInfo
{
    /// <summary>Declared number of accesses per actor.</summary>
    [Id(0)] public Dictionary<GrainId, int> Accesses { get; init; } = new();

    /// <summary>Declares <paramref name="times"/> more accesses to an actor.</summary>
    public ActorAccessInfo Add(GrainId actor, int times = 1)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(times, 1);
        Accesses[actor] = Accesses.GetValueOrDefault(actor) + times;
        return this;
    }

    /// <summary>Declares <paramref name="times"/> more accesses to an actor reference.</summary>
    public ActorAccessInfo Add(IAddressable actor, int times = 1) => Add(actor.GetGrainId(), times);

    /// <summary>One access to each actor; an actor named twice is declared twice.</summary>
    public static ActorAccessInfo Of(params IAddressable[] actors)
    {
        var info = new ActorAccessInfo();
        foreach (var actor in actors)
        {
            info.Add(actor);
        }

        return info;
    }
}
