using Orleans.Transactions;

namespace Snapper.Workloads;

/// <summary>Turns the exception a failed transaction raised into a short abort reason for the results.</summary>
public static class AbortClassifier
{
    public static RunOutcome Classify(Exception exception) => RunOutcome.Abort(exception switch
    {
        TransactionAbortedException snapper => snapper.Reason.ToString(),
        OrleansTransactionAbortedException orleans => Trim(orleans.GetType().Name),
        OrleansTransactionException orleans => Trim(orleans.GetType().Name),
        TimeoutException => "Timeout",
        _ => "Error:" + exception.GetType().Name,
    });

    private static string Trim(string typeName) =>
        typeName.Replace("OrleansTransaction", "", StringComparison.Ordinal)
            .Replace("Orleans", "", StringComparison.Ordinal)
            .Replace("Exception", "", StringComparison.Ordinal) is { Length: > 0 } name ? name : "Aborted";
}
