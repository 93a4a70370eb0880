using Microsoft.CodeAnalysis;

namespace Snapper.Analyzers;

/// <summary>Snapper's types as the compilation sees them; null when it does not reference Snapper.</summary>
internal sealed class SnapperSymbols
{
    private SnapperSymbols(Compilation compilation, INamedTypeSymbol transactionalActor)
    {
        TransactionalActor = transactionalActor;
        TxnContext = compilation.GetTypeByMetadataName("Snapper.TxnContext");
        Task = compilation.GetTypeByMetadataName("System.Threading.Tasks.Task");
        TaskOfT = compilation.GetTypeByMetadataName("System.Threading.Tasks.Task`1");
        Extensions = compilation.GetTypeByMetadataName("Snapper.TransactionalActorExtensions");
        AccessInfo = compilation.GetTypeByMetadataName("Snapper.ActorAccessInfo");
        Addressable = compilation.GetTypeByMetadataName("Orleans.Runtime.IAddressable");
    }

    public INamedTypeSymbol TransactionalActor { get; }

    public INamedTypeSymbol? TxnContext { get; }

    public INamedTypeSymbol? Task { get; }

    public INamedTypeSymbol? TaskOfT { get; }

    public INamedTypeSymbol? Extensions { get; }

    public INamedTypeSymbol? AccessInfo { get; }

    public INamedTypeSymbol? Addressable { get; }

    public static SnapperSymbols? For(Compilation compilation) =>
        compilation.GetTypeByMetadataName("Snapper.ITransactionalActor") is { } actor ? new SnapperSymbols(compilation, actor) : null;

    /// <summary>Whether <paramref name="type"/> is, or derives from, ITransactionalActor.</summary>
    public bool IsTransactional(ITypeSymbol? type) =>
        type is not null && (SymbolEqualityComparer.Default.Equals(type, TransactionalActor)
            || type.AllInterfaces.Any(i => SymbolEqualityComparer.Default.Equals(i, TransactionalActor)));

    /// <summary>Whether <paramref name="type"/> is Snapper's transactional actor base class (any TState), or derives from it.</summary>
    public static bool IsSnapperActorClass(INamedTypeSymbol? type)
    {
        for (var current = type; current is not null; current = current.BaseType)
        {
            if (current is { Name: "TransactionalActor", ContainingNamespace.Name: "Snapper", ContainingNamespace.ContainingNamespace.IsGlobalNamespace: true })
            {
                return true;
            }
        }

        return false;
    }
}
