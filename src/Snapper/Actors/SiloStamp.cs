namespace Snapper.Actors;

/// <summary>
/// What every call to one of Snapper's internal entry points of an actor carries to prove that Snapper sent it from a
/// silo of the cluster: the sending silo and that silo's call key (see <see cref="SiloCallKeys"/>). A client can name a
/// silo, but it cannot know the silo's key.
/// </summary>
[GenerateSerializer, Immutable, Alias("snapper.silo-stamp")]
internal readonly record struct SiloStamp([property: Id(0)] SiloAddress? Silo, [property: Id(1)] Guid Key);
