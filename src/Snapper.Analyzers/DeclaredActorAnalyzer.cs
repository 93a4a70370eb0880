using System.Collections.Immutable;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Operations;

namespace Snapper.Analyzers;

/// <summary>
/// SNAP004: <c>ActorAccessInfo.Of</c>, <c>Add</c> or <c>AddKeys</c> given a grain reference whose type is not a
/// transactional actor (a PACT can only call those; at run time the PACT would wait for an actor that never joins).
/// References typed only as <c>IAddressable</c> (or a base of it) are left alone: their actor is known at run time only.
/// </summary>
[DiagnosticAnalyzer(LanguageNames.CSharp)]
public sealed class DeclaredActorAnalyzer : SnapperAnalyzer
{
    public override ImmutableArray<DiagnosticDescriptor> SupportedDiagnostics => [SnapperDiagnostics.DeclaredActor];

    private protected override void Register(CompilationStartAnalysisContext context, SnapperSymbols symbols)
    {
        if (symbols is { AccessInfo: not null, Addressable: not null })
        {
            context.RegisterOperationAction(operation => Check(operation, symbols), OperationKind.Invocation);
        }
    }

    private static void Check(OperationAnalysisContext context, SnapperSymbols symbols)
    {
        var invocation = (IInvocationOperation)context.Operation;
        if (!SymbolEqualityComparer.Default.Equals(invocation.TargetMethod.ContainingType, symbols.AccessInfo)
            || invocation.TargetMethod.Name is not ("Of" or "Add" or "AddKeys"))
        {
            return;
        }

        foreach (var argument in invocation.Arguments)
        {
            var values = argument.ArgumentKind == ArgumentKind.ParamArray && argument.Value is IArrayCreationOperation { Initializer: { } initializer }
                ? initializer.ElementValues
                : [argument.Value];
            foreach (var value in values)
            {
                var declared = value is IConversionOperation { IsImplicit: true } conversion ? conversion.Operand : value;
                var isActorParameter = SymbolEqualityComparer.Default.Equals(value.Type, symbols.Addressable)
                    || value.Type is IArrayTypeSymbol { ElementType: var element } && SymbolEqualityComparer.Default.Equals(element, symbols.Addressable);
                if (isActorParameter && declared.Type is { } type && !SymbolEqualityComparer.Default.Equals(type, symbols.Addressable)
                    && type.TypeKind is TypeKind.Interface or TypeKind.Class && !symbols.IsTransactional(type) && !IsBaseOfAddressable(type, symbols))
                {
                    context.ReportDiagnostic(Diagnostic.Create(SnapperDiagnostics.DeclaredActor, declared.Syntax.GetLocation(), declared.Syntax.ToString(), type.Name));
                }
            }
        }
    }

    // object, or an interface IAddressable derives from: nothing is known about the actor.
    private static bool IsBaseOfAddressable(ITypeSymbol type, SnapperSymbols symbols) =>
        type.SpecialType == SpecialType.System_Object
        || symbols.Addressable!.AllInterfaces.Any(i => SymbolEqualityComparer.Default.Equals(i, type));
}
