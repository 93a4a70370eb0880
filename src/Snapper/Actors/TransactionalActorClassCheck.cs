using Microsoft.Extensions.Options;
using Orleans.Configuration;

namespace Snapper.Actors;

/// <summary>
/// Checks every transactional actor class the silo hosts when the silo starts, so that a class Snapper could not
/// call (two transactional methods of one name) stops the start with a message naming both methods, instead of
/// failing every call to it from its first activation on.
/// </summary>
/// <remarks>
/// The classes are Orleans' own list, <see cref="GrainTypeOptions.Classes"/>: the grain classes found in the silo's
/// application parts, from which it also builds the map it activates grains from. A class missing there cannot be
/// activated, so nothing is left unchecked. The check runs at the first lifecycle stage, before the log is
/// recovered and before the silo joins the cluster.
/// </remarks>
internal sealed class TransactionalActorClassCheck(IOptions<GrainTypeOptions> grainTypes, TransactionalMethodTables tables)
    : ILifecycleParticipant<ISiloLifecycle>
{
    public void Participate(ISiloLifecycle lifecycle) => lifecycle.Subscribe(
        nameof(TransactionalActorClassCheck), ServiceLifecycleStage.First,
        _ =>
        {
            CheckAll();
            return Task.CompletedTask;
        });

    /// <summary>Builds the method table of every transactional actor class; the first bad one throws.</summary>
    /// <exception cref="DuplicateTransactionalMethodException">A class has two transactional methods of one name.</exception>
    public void CheckAll()
    {
        // In name order, so that a silo with several bad classes always reports the same one first.
        foreach (var type in grainTypes.Value.Classes.Where(IsTransactionalActorClass).OrderBy(t => t.FullName, StringComparer.Ordinal))
        {
            tables.Check(type);
        }
    }

    /// <summary>A class that can be activated and derives from <see cref="TransactionalActor{TState}"/>.</summary>
    public static bool IsTransactionalActorClass(Type type)
    {
        if (type.IsAbstract || type.IsInterface)
        {
            return false;
        }

        for (var at = type.BaseType; at is not null; at = at.BaseType)
        {
            if (at.IsGenericType && at.GetGenericTypeDefinition() == typeof(TransactionalActor<>))
            {
                return true;
            }
        }

        return false;
    }
}
