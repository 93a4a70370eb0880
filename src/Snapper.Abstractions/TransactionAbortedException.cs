namespace Snapper;

/// <summary>
/// The one exception a client sees when its transaction aborted. Nothing the transaction wrote remains
/// in any actor. Branch on <see cref="Reason"/>; for <see cref="AbortReason.UserException"/> the exception
/// the user code threw is <see cref="Exception.InnerException"/>, and its type name is kept in
/// <see cref="UserExceptionType"/> even where the client cannot load that type.
/// </summary>
[GenerateSerializer, Alias("snapper.aborted")]
public sealed class TransactionAbortedException : SnapperException
{
    /// <summary>Creates the exception.</summary>
    public TransactionAbortedException(long tid, AbortReason reason, string message, Exception? innerException = null)
        : base($"Transaction {tid} aborted ({reason}): {message}", innerException)
    {
        Tid = tid;
        Reason = reason;
        UserExceptionType = reason == AbortReason.UserException ? innerException?.GetType().FullName : null;
    }

    /// <summary>
    /// Creates the exception for a user exception that cannot travel to the client (its type has no
    /// Orleans serializer): the type name and message are kept, the exception object is not.
    /// </summary>
    internal TransactionAbortedException(long tid, string message, string userExceptionType)
        : base($"Transaction {tid} aborted ({AbortReason.UserException}): {message}")
    {
        Tid = tid;
        Reason = AbortReason.UserException;
        UserExceptionType = userExceptionType;
    }

    /// <summary>The id of the aborted transaction.</summary>
    [Id(0)] public long Tid { get; private set; }

    /// <summary>Why it aborted.</summary>
    [Id(1)] public AbortReason Reason { get; private set; }

    /// <summary>
    /// Whether the same transaction may commit if submitted again (<see cref="AbortReasons.IsTransient"/>): it gave way
    /// to others or waited too long. Otherwise the abort is final: submitting it again fails again.
    /// </summary>
    public bool IsTransient => Reason.IsTransient();

    /// <summary>For <see cref="AbortReason.UserException"/>: the full type name of the exception user code threw.</summary>
    [Id(2)] public string? UserExceptionType { get; private set; }
}
