namespace Snapper;

/// <summary>
/// A transaction used a key of a key-value actor's state that it did not acquire with <c>GetState</c>, or wrote a key it
/// acquired for reading only. The transaction aborts (<see cref="AbortReason.InvalidCall"/>); acquire every key first.
/// </summary>
[GenerateSerializer, Alias("snapper.key-not-acquired")]
public sealed class KeyNotAcquiredException : SnapperException
{
    /// <summary>Creates the exception.</summary>
    public KeyNotAcquiredException(string actor, string key, string problem)
        : base($"Key '{key}' of actor {actor}: {problem}")
    {
        Actor = actor;
        Key = key;
    }

    /// <summary>The actor whose state was used.</summary>
    [Id(0)] public string Actor { get; private set; }

    /// <summary>The key, as text.</summary>
    [Id(1)] public string Key { get; private set; }
}
