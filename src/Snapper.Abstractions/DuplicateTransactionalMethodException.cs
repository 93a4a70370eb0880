namespace Snapper;

/// <summary>
/// An actor class has two transactional methods with the same name: overloads, or methods of two transactional
/// interfaces it implements. Transactions name their methods by name alone, so such a class cannot be called;
/// the silo refuses to start with it (and, should the class reach an activation anyway, the activation fails).
/// Rename one of the two methods.
/// </summary>
[GenerateSerializer, Alias("snapper.duplicate-method")]
public sealed class DuplicateTransactionalMethodException : SnapperException
{
    /// <summary>Creates the exception.</summary>
    /// <param name="actorType">The actor class.</param>
    /// <param name="method">The name both methods share.</param>
    /// <param name="first">The first method: its interface and signature.</param>
    /// <param name="second">The second method: its interface and signature.</param>
    public DuplicateTransactionalMethodException(string actorType, string method, string first, string second)
        : base($"Actor class {actorType} has two transactional methods named '{method}': {first} and {second}. " +
               "Snapper calls transactional methods by name, so names must be unique per actor class, across all its " +
               "transactional interfaces and without overloads; rename one of them.")
    {
        ActorType = actorType;
        Method = method;
        First = first;
        Second = second;
    }

    /// <summary>The actor class.</summary>
    [Id(0)] public string ActorType { get; private set; }

    /// <summary>The name both methods share.</summary>
    [Id(1)] public string Method { get; private set; }

    /// <summary>The first method, as <c>Interface.Name(TxnContext, TInput)</c> with its result type.</summary>
    [Id(2)] public string First { get; private set; }

    /// <summary>The second method, in the same form.</summary>
    [Id(3)] public string Second { get; private set; }
}
