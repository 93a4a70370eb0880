namespace Snapper;

/// <summary>
/// A dependency between keys of two key-value actors cannot be registered or enforced as asked: its leader key does
/// not exist, it would close a cycle of dependencies, its keys, values or update function do not fit the actors' types,
/// or it links two keys of one actor. The transaction aborts (<see cref="AbortReason.InvalidCall"/>) and nothing of it
/// stays.
/// </summary>
[GenerateSerializer, Alias("snapper.dependency-error")]
public sealed class DependencyException : SnapperException
{
    /// <summary>Creates the exception.</summary>
    public DependencyException(string message) : base(message) { }
}
