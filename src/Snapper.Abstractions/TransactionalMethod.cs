using System.Collections.Concurrent;
using System.Reflection;

namespace Snapper;

/// <summary>
/// Turns a method group of an actor reference (for example <c>account.Deposit</c>) into the name Snapper
/// sends, so that callers name methods through the compiler rather than through strings.
/// </summary>
public static class TransactionalMethod
{
    // A delegate bound to a grain reference points at the generated proxy's implementation of the
    // interface method; mapping it back to the interface method is reflection, so it is done once per method.
    private static readonly ConcurrentDictionary<MethodInfo, string> Names = new();

    /// <summary>The actor reference a method group is bound to.</summary>
    /// <exception cref="ArgumentException">The delegate is not bound to a transactional actor reference.</exception>
    public static ITransactionalActor TargetOf(Delegate method) =>
        method.Target as ITransactionalActor
        ?? throw new ArgumentException(
            "Pass a method group of a transactional actor reference, as in 'CallActor(ctx, account.Deposit, input)'.", nameof(method));

    /// <summary>The transactional method name behind <paramref name="method"/>.</summary>
    /// <exception cref="ArgumentException">The delegate is not a method of an interface derived from <see cref="ITransactionalActor"/>.</exception>
    public static string NameOf(Delegate method) => Names.GetOrAdd(method.Method, Resolve);

    /// <summary>Checks that <paramref name="method"/> is bound to <paramref name="actor"/> and returns its name.</summary>
    internal static string NameOf(ITransactionalActor actor, Delegate method)
    {
        if (method.Target is not IAddressable target || !ReferenceEquals(target, actor) && target.GetGrainId() != actor.GetGrainId())
        {
            throw new ArgumentException(
                "The method must belong to the actor the transaction starts on, as in 'account.StartTxn(account.Deposit, input)'.", nameof(method));
        }

        return NameOf(method);
    }

    private static string Resolve(MethodInfo method)
    {
        var type = method.DeclaringType
            ?? throw new ArgumentException($"Method {method.Name} has no declaring type.", nameof(method));
        if (type.IsInterface && IsTransactionalInterface(type))
        {
            return method.Name;
        }

        foreach (var iface in type.GetInterfaces())
        {
            if (!IsTransactionalInterface(iface))
            {
                continue;
            }

            var map = type.GetInterfaceMap(iface);
            var index = Array.IndexOf(map.TargetMethods, method);
            if (index >= 0)
            {
                return map.InterfaceMethods[index].Name;
            }
        }

        throw new ArgumentException(
            $"{type.Name}.{method.Name} is not a method of an interface derived from {nameof(ITransactionalActor)}.", nameof(method));
    }

    /// <summary>True for user interfaces that derive from <see cref="ITransactionalActor"/> (not the marker itself).</summary>
    public static bool IsTransactionalInterface(Type iface) =>
        iface != typeof(ITransactionalActor) && typeof(ITransactionalActor).IsAssignableFrom(iface);
}
