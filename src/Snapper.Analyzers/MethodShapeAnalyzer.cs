using System.Collections.Immutable;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Diagnostics;

namespace Snapper.Analyzers;

/// <summary>SNAP001: every method an interface derived from ITransactionalActor declares is <c>Task[&lt;T&gt;] M(TxnContext, TInput)</c>.</summary>
[DiagnosticAnalyzer(LanguageNames.CSharp)]
public sealed class MethodShapeAnalyzer : SnapperAnalyzer
{
    public override ImmutableArray<DiagnosticDescriptor> SupportedDiagnostics => [SnapperDiagnostics.MethodShape];

    private protected override void Register(CompilationStartAnalysisContext context, SnapperSymbols symbols) =>
        context.RegisterSymbolAction(symbol => Check(symbol, symbols), SymbolKind.NamedType);

    private static void Check(SymbolAnalysisContext context, SnapperSymbols symbols)
    {
        var type = (INamedTypeSymbol)context.Symbol;
        if (type.TypeKind != TypeKind.Interface || SymbolEqualityComparer.Default.Equals(type, symbols.TransactionalActor) || !symbols.IsTransactional(type))
        {
            return;
        }

        foreach (var method in type.GetMembers().OfType<IMethodSymbol>().Where(m => m.MethodKind == MethodKind.Ordinary && !m.IsStatic))
        {
            if (!HasShape(method, symbols))
            {
                context.ReportDiagnostic(Diagnostic.Create(SnapperDiagnostics.MethodShape, method.Locations.FirstOrDefault(), $"{type.Name}.{method.Name}", method.Name));
            }
        }
    }

    private static bool HasShape(IMethodSymbol method, SnapperSymbols symbols) =>
        method.Parameters.Length == 2
        && method.TypeParameters.Length == 0
        && SymbolEqualityComparer.Default.Equals(method.Parameters[0].Type, symbols.TxnContext)
        && method.Parameters.All(p => p.RefKind == RefKind.None)
        && (SymbolEqualityComparer.Default.Equals(method.ReturnType, symbols.Task)
            || SymbolEqualityComparer.Default.Equals(method.ReturnType.OriginalDefinition, symbols.TaskOfT));
}
