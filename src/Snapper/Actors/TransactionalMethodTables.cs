using System.Collections.Concurrent;

namespace Snapper.Actors;

/// <summary>
/// The method table of every actor class in the silo. The silo builds the tables of the classes it hosts when it
/// starts (<see cref="TransactionalActorClassCheck"/>), so that a class with two methods of one name stops the start;
/// a class it did not know of (a constructed generic one) gets its table on first activation.
/// </summary>
internal sealed class TransactionalMethodTables
{
    private readonly ConcurrentDictionary<Type, TransactionalMethodTable> _tables = new();

    public TransactionalMethodTable For(Type actorType) => _tables.GetOrAdd(actorType, TransactionalMethodTable.Build);

    /// <summary>
    /// Checks <paramref name="actorType"/> now rather than at its first activation: builds its table, or, for an open
    /// generic class (which has no table of its own), checks its method names, which every construction shares.
    /// </summary>
    /// <exception cref="DuplicateTransactionalMethodException">Two of its transactional methods share a name.</exception>
    public void Check(Type actorType)
    {
        if (actorType.ContainsGenericParameters)
        {
            TransactionalMethodTable.FindMethods(actorType);
        }
        else
        {
            For(actorType);
        }
    }
}
