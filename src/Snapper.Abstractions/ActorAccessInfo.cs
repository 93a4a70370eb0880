namespace Snapper;

/// <summary>
/// The accesses a PACT declares before it runs: each actor it touches and how many times it calls it
/// (thesis §3.2.1), the first actor's own call included, and, for key-value actors, optionally the keys it uses there
/// (thesis §5.3.3.3). Built with <see cref="Add(IAddressable, int)"/>, <see cref="Add(GrainId, int)"/> and
/// <see cref="AddKeys{TKey}(IAddressable, TKey[])"/>, or <see cref="Of(IAddressable[])"/> for the common case of one
/// access per actor.
/// </summary>
/// <remarks>
/// An actor declared without keys is declared whole: the PACT may use any of its state. An actor declared with keys is
/// declared for those keys only: using another key of it, or enumerating it, aborts the PACT with
/// <see cref="AbortReason.UndeclaredAccess"/>. On a key-value actor configured for key-level concurrency control, batches
/// whose PACTs all declared keys there run side by side on disjoint keys; a PACT that declared the actor whole runs
/// there alone.
/// </remarks>
[GenerateSerializer, Alias("snapper.access-info")]
public sealed class ActorAccessInfo
{
    /// <summary>An empty declaration; add the actors with <see cref="Add(IAddressable, int)"/>.</summary>
    public ActorAccessInfo()
        : this(0)
    {
    }

    /// <summary>An empty declaration with room for <paramref name="actors"/> actors, for a caller that knows how many it declares.</summary>
    public ActorAccessInfo(int actors) => Accesses = new Dictionary<GrainId, int>(actors);

    /// <summary>Declared number of accesses per actor.</summary>
    [Id(0)] public Dictionary<GrainId, int> Accesses { get; init; }

    /// <summary>
    /// The keys declared per actor, for the actors declared by key (absent: declared whole). Keys are Orleans-serializable
    /// values with value equality, of the actor's key type. Added in a later version: a payload without it declares every
    /// actor whole, as before.
    /// </summary>
    [Id(1)] public Dictionary<GrainId, HashSet<object>>? Keys { get; set; }

    /// <summary>Declares <paramref name="times"/> more accesses to an actor.</summary>
    public ActorAccessInfo Add(GrainId actor, int times = 1)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(times, 1);
        Accesses[actor] = Accesses.GetValueOrDefault(actor) + times;
        return this;
    }

    /// <summary>Declares <paramref name="times"/> more accesses to an actor reference.</summary>
    public ActorAccessInfo Add(IAddressable actor, int times = 1) => Add(actor.GetGrainId(), times);

    /// <summary>
    /// Declares that the PACT uses only <paramref name="keys"/> of a key-value actor (together with keys declared for it
    /// before), and one access to it if it was not declared yet.
    /// </summary>
    /// <exception cref="ArgumentException">No key is given, or a key is null.</exception>
    public ActorAccessInfo AddKeys<TKey>(GrainId actor, params TKey[] keys)
        where TKey : notnull
    {
        ArgumentNullException.ThrowIfNull(keys);
        if (keys.Length == 0 || keys.Any(key => key is null))
        {
            throw new ArgumentException("Declare at least one key, and no null key.", nameof(keys));
        }

        if (!Accesses.ContainsKey(actor))
        {
            Add(actor);
        }

        Keys ??= new();
        if (!Keys.TryGetValue(actor, out var declared))
        {
            Keys[actor] = declared = new HashSet<object>();
        }

        foreach (var key in keys)
        {
            declared.Add(key);
        }

        return this;
    }

    /// <summary>Declares keys of a key-value actor reference; see <see cref="AddKeys{TKey}(GrainId, TKey[])"/>.</summary>
    public ActorAccessInfo AddKeys<TKey>(IAddressable actor, params TKey[] keys)
        where TKey : notnull => AddKeys(actor.GetGrainId(), keys);

    /// <summary>The keys declared for <paramref name="actor"/>; null if it is declared whole.</summary>
    public IReadOnlySet<object>? KeysOf(GrainId actor) => Keys?.GetValueOrDefault(actor);

    /// <summary>
    /// A copy that later changes to this declaration do not reach: a PACT that leaves its silo to be ordered is ordered,
    /// delivered and finished by the declaration as it read when it was submitted.
    /// </summary>
    internal ActorAccessInfo Snapshot() => new(0)
    {
        Accesses = new Dictionary<GrainId, int>(Accesses),
        Keys = Keys?.ToDictionary(entry => entry.Key, entry => new HashSet<object>(entry.Value)),
    };

    /// <summary>One access to each actor; an actor named twice is declared twice.</summary>
    public static ActorAccessInfo Of(params IAddressable[] actors)
    {
        var info = new ActorAccessInfo(actors.Length);
        foreach (var actor in actors)
        {
            info.Add(actor);
        }

        return info;
    }
}
