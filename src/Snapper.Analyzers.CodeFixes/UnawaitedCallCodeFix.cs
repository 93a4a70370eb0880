using System.Collections.Immutable;
using System.Composition;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CodeActions;
using Microsoft.CodeAnalysis.CodeFixes;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.CSharp.Syntax;
using Snapper.Analyzers;

namespace Snapper.Analyzers.CodeFixes;

/// <summary>SNAP002's fix, inside an async method: await the dropped task where it stands.</summary>
[ExportCodeFixProvider(LanguageNames.CSharp, Name = nameof(UnawaitedCallCodeFix)), Shared]
public sealed class UnawaitedCallCodeFix : CodeFixProvider
{
    public override ImmutableArray<string> FixableDiagnosticIds => [SnapperDiagnostics.UnawaitedCall.Id];

    public override FixAllProvider GetFixAllProvider() => WellKnownFixAllProviders.BatchFixer;

    public override async Task RegisterCodeFixesAsync(CodeFixContext context)
    {
        var root = await context.Document.GetSyntaxRootAsync(context.CancellationToken).ConfigureAwait(false);
        if (root?.FindNode(context.Span, getInnermostNodeForTie: true) is not { } node
            || node.FirstAncestorOrSelf<InvocationExpressionSyntax>() is not { } call
            || !InAsyncBody(call))
        {
            return;
        }

        context.RegisterCodeFix(
            CodeAction.Create("Await the task", _ => Task.FromResult(context.Document.WithSyntaxRoot(root.ReplaceNode(call, Awaited(call)))), nameof(UnawaitedCallCodeFix)),
            context.Diagnostics);
    }

    private static AwaitExpressionSyntax Awaited(InvocationExpressionSyntax call) =>
        SyntaxFactory.AwaitExpression(call.WithoutLeadingTrivia()).WithLeadingTrivia(call.GetLeadingTrivia());

    private static bool InAsyncBody(SyntaxNode node) => node.Ancestors().FirstOrDefault(a => a is AnonymousFunctionExpressionSyntax or LocalFunctionStatementSyntax or MethodDeclarationSyntax) switch
    {
        AnonymousFunctionExpressionSyntax lambda => lambda.AsyncKeyword.IsKind(SyntaxKind.AsyncKeyword),
        LocalFunctionStatementSyntax local => local.Modifiers.Any(SyntaxKind.AsyncKeyword),
        MethodDeclarationSyntax method => method.Modifiers.Any(SyntaxKind.AsyncKeyword),
        _ => false,
    };
}
