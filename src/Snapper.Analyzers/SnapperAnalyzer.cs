using Microsoft.CodeAnalysis.Diagnostics;

namespace Snapper.Analyzers;

/// <summary>
/// What every Snapper rule does first: skip generated code, run concurrently, and register its actions only in
/// compilations that reference Snapper (<see cref="SnapperSymbols"/>).
/// </summary>
public abstract class SnapperAnalyzer : DiagnosticAnalyzer
{
    public sealed override void Initialize(AnalysisContext context)
    {
        context.ConfigureGeneratedCodeAnalysis(GeneratedCodeAnalysisFlags.None);
        context.EnableConcurrentExecution();
        context.RegisterCompilationStartAction(start =>
        {
            if (SnapperSymbols.For(start.Compilation) is { } symbols)
            {
                Register(start, symbols);
            }
        });
    }

    /// <summary>Registers the rule's actions for a compilation that references Snapper.</summary>
    private protected abstract void Register(CompilationStartAnalysisContext context, SnapperSymbols symbols);
}
