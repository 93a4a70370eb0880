using System.Collections.Immutable;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Operations;

namespace Snapper.Analyzers;

/// <summary>
/// SNAP003: <c>a.StartTxn(b.Method, input)</c> names a method of another reference than the one the transaction starts
/// on (at run time an <c>ArgumentException</c>, or the wrong actor). Two references count as the same when they are
/// the same local, parameter, field or property, or the same expression.
/// </summary>
[DiagnosticAnalyzer(LanguageNames.CSharp)]
public sealed class StartTxnTargetAnalyzer : SnapperAnalyzer
{
    public override ImmutableArray<DiagnosticDescriptor> SupportedDiagnostics => [SnapperDiagnostics.StartTxnTarget];

    private protected override void Register(CompilationStartAnalysisContext context, SnapperSymbols symbols)
    {
        if (symbols.Extensions is { } extensions)
        {
            context.RegisterOperationAction(operation => Check(operation, extensions), OperationKind.Invocation);
        }
    }

    private static void Check(OperationAnalysisContext context, INamedTypeSymbol extensions)
    {
        var invocation = (IInvocationOperation)context.Operation;
        if (invocation.TargetMethod.Name != "StartTxn" || !SymbolEqualityComparer.Default.Equals(invocation.TargetMethod.ContainingType, extensions)
            || invocation.Arguments.Length < 2)
        {
            return;
        }

        // Reduced extension call: argument 0 is the actor, argument 1 the method group.
        var actor = Unwrap(invocation.Arguments[0].Value);
        if (Unwrap(invocation.Arguments[1].Value) is not IDelegateCreationOperation { Target: IMethodReferenceOperation { Instance: { } owner } reference })
        {
            return;
        }

        owner = Unwrap(owner);
        if (!SameReference(actor, owner))
        {
            context.ReportDiagnostic(Diagnostic.Create(SnapperDiagnostics.StartTxnTarget, invocation.Arguments[1].Syntax.GetLocation(),
                actor.Syntax.ToString(), owner.Syntax.ToString(), reference.Method.Name));
        }
    }

    private static IOperation Unwrap(IOperation operation)
    {
        while (operation is IConversionOperation { IsImplicit: true } conversion)
        {
            operation = conversion.Operand;
        }

        return operation;
    }

    private static bool SameReference(IOperation a, IOperation b) => (a, b) switch
    {
        (ILocalReferenceOperation x, ILocalReferenceOperation y) => SymbolEqualityComparer.Default.Equals(x.Local, y.Local),
        (IParameterReferenceOperation x, IParameterReferenceOperation y) => SymbolEqualityComparer.Default.Equals(x.Parameter, y.Parameter),
        (IFieldReferenceOperation x, IFieldReferenceOperation y) => SymbolEqualityComparer.Default.Equals(x.Field, y.Field) && SameInstance(x.Instance, y.Instance),
        (IPropertyReferenceOperation x, IPropertyReferenceOperation y) => SymbolEqualityComparer.Default.Equals(x.Property, y.Property) && SameInstance(x.Instance, y.Instance),
        (IInstanceReferenceOperation, IInstanceReferenceOperation) => true,
        _ => a.Syntax.IsEquivalentTo(b.Syntax, topLevel: false),
    };

    private static bool SameInstance(IOperation? a, IOperation? b) => a is null ? b is null : b is not null && SameReference(Unwrap(a), Unwrap(b));
}
