using System.Collections.Immutable;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Operations;

namespace Snapper.Analyzers;

/// <summary>
/// SNAP002: the task of a <c>CallActor</c> or <c>GetState</c> of a transactional actor is dropped (a statement of its
/// own, or assigned to the discard), so nothing awaits it before the method returns. Tasks kept in a variable, passed
/// on (to <c>Task.WhenAll</c>) or returned are left alone: whether they are awaited in time is the run-time check's.
/// </summary>
[DiagnosticAnalyzer(LanguageNames.CSharp)]
public sealed class UnawaitedCallAnalyzer : SnapperAnalyzer
{
    /// <summary>The methods whose task must be awaited within the transaction's method.</summary>
    internal static readonly ImmutableHashSet<string> TransactionalCalls = ["CallActor", "GetState", "RegisterUpdateDependency", "RegisterDeleteDependency", "DeregisterDependency"];

    public override ImmutableArray<DiagnosticDescriptor> SupportedDiagnostics => [SnapperDiagnostics.UnawaitedCall];

    private protected override void Register(CompilationStartAnalysisContext context, SnapperSymbols symbols) =>
        context.RegisterOperationAction(Check, OperationKind.Invocation);

    private static void Check(OperationAnalysisContext context)
    {
        var invocation = (IInvocationOperation)context.Operation;
        if (!TransactionalCalls.Contains(invocation.TargetMethod.Name) || !SnapperSymbols.IsSnapperActorClass(invocation.TargetMethod.ContainingType))
        {
            return;
        }

        var parent = invocation.Parent;
        while (parent is IConversionOperation { IsImplicit: true })
        {
            parent = parent.Parent;
        }

        var dropped = parent is IExpressionStatementOperation
            || parent is ISimpleAssignmentOperation { Target: IDiscardOperation };
        if (dropped)
        {
            context.ReportDiagnostic(Diagnostic.Create(SnapperDiagnostics.UnawaitedCall, invocation.Syntax.GetLocation(), invocation.TargetMethod.Name));
        }
    }
}
