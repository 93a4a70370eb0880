using Orleans.Transactions;

namespace Snapper.Workloads;

/// <summary>Turns the exception a failed transaction raised into a short abort reason for the results.</summary>
public static class AbortClassifier
{
    /// <summary>The reason recorded for a rollback the workload asked for (TPC-C's unknown item).</summary>
    public const string UserRollback = "UserRollback";

    /// <param name="exception">What the client caught.</param>
    /// <param name="rollback">The exception type the workload throws on purpose, if any; counted as <see cref="UserRollback"/>.</param>
    public static RunOutcome Classify(Exception exception, Type? rollback = null) => RunOutcome.Abort(exception switch
    {
        _ when rollback is not null && IsRollback(exception, rollback) => UserRollback,
        TransactionAbortedException snapper => snapper.Reason.ToString(),
        OrleansTransactionAbortedException orleans => Trim(orleans.GetType().Name),
        OrleansTransactionException orleans => Trim(orleans.GetType().Name),
        TimeoutException => "Timeout",
        _ => "Error:" + exception.GetType().Name,
    });

    private static bool IsRollback(Exception exception, Type rollback)
    {
        for (Exception? current = exception; current is not null; current = current.InnerException)
        {
            if (rollback.IsInstanceOfType(current)
                || current is TransactionAbortedException { Reason: AbortReason.UserException } aborted && aborted.UserExceptionType == rollback.FullName)
            {
                return true;
            }
        }

        return false;
    }

    private static string Trim(string typeName) =>
        typeName.Replace("OrleansTransaction", "", StringComparison.Ordinal)
            .Replace("Orleans", "", StringComparison.Ordinal)
            .Replace("Exception", "", StringComparison.Ordinal) is { Length: > 0 } name ? name : "Aborted";
}
