using System.Collections.Concurrent;

namespace Snapper.Actors;

/// <summary>The method table of every actor class in the silo, built on first activation of the class.</summary>
internal sealed class TransactionalMethodTables
{
    private readonly ConcurrentDictionary<Type, TransactionalMethodTable> _tables = new();

    public TransactionalMethodTable For(Type actorType) => _tables.GetOrAdd(actorType, TransactionalMethodTable.Build);
}
