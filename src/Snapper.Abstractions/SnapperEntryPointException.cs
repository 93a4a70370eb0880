namespace Snapper;

/// <summary>
/// A call reached one of Snapper's internal entry points of an actor (a call inside a transaction, or two-phase commit)
/// from a client or from outside any grain. Only Snapper itself, from inside a silo, calls them; a client starts
/// transactions with <c>StartTxn</c>. The call was refused before it touched anything.
/// </summary>
[GenerateSerializer, Alias("snapper.entry-point")]
public sealed class SnapperEntryPointException : SnapperException
{
    /// <summary>Creates the exception.</summary>
    public SnapperEntryPointException(string method, string? caller)
        : base($"'{method}' is internal to Snapper and only transactional actors in a silo may call it; it was called by {caller ?? "code outside any grain"}. Start transactions with StartTxn.")
    {
        Method = method;
        Caller = caller;
    }

    /// <summary>The internal method that was called.</summary>
    [Id(0)] public string Method { get; private set; }

    /// <summary>Who called it (a client id), or null when it came from outside any grain.</summary>
    [Id(1)] public string? Caller { get; private set; }
}
