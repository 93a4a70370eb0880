using Microsoft.CodeAnalysis;

namespace Snapper.Analyzers;

/// <summary>The rules: each says what is wrong and what to do instead.</summary>
internal static class SnapperDiagnostics
{
    private const string Category = "Snapper";

    public static readonly DiagnosticDescriptor MethodShape = new(
        "SNAP001",
        "A transactional actor's method must take a TxnContext and one input and return a Task",
        "'{0}' cannot be called in a transaction: give it the shape 'Task {1}(TxnContext ctx, TInput input)' or 'Task<TResult> {1}(TxnContext ctx, TInput input)' (one input; wrap several in a record)",
        Category,
        DiagnosticSeverity.Error,
        isEnabledByDefault: true,
        description: "Snapper calls the methods of interfaces derived from ITransactionalActor with the transaction's context and one input, and waits for their task.");

    public static readonly DiagnosticDescriptor UnawaitedCall = new(
        "SNAP002",
        "A CallActor or GetState task must be awaited before the method returns",
        "The task of '{0}' is dropped: await it (or a Task.WhenAll that includes it) before the method returns; a transaction whose method returns with a call still running aborts with UnawaitedCall",
        Category,
        DiagnosticSeverity.Warning,
        isEnabledByDefault: true);

    public static readonly DiagnosticDescriptor StartTxnTarget = new(
        "SNAP003",
        "StartTxn must name a method of the actor it is called on",
        "The transaction is started on '{0}' but names a method of '{1}': start it on the actor whose method it names, as in '{1}.StartTxn({1}.{2}, input)'",
        Category,
        DiagnosticSeverity.Error,
        isEnabledByDefault: true);

    public static readonly DiagnosticDescriptor DeclaredActor = new(
        "SNAP004",
        "A PACT may declare only transactional actors",
        "'{0}' is a '{1}', which is not a transactional actor (its interface does not derive from ITransactionalActor): a PACT cannot call it; declare only actors it calls",
        Category,
        DiagnosticSeverity.Error,
        isEnabledByDefault: true);
}
