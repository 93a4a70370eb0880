namespace Snapper;

/// <summary>
/// A call reached one of Snapper's internal entry points (an actor's call inside a transaction, two-phase commit or
/// migration, or one of Snapper's system grains) from a client, or from a sender that could not prove it is a silo of the
/// cluster. Only Snapper itself, from inside a silo, calls them; a client starts transactions with <c>StartTxn</c>. The
/// call was refused before it touched anything.
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

    /// <summary>
    /// Who called it, as far as the refusing side knows: a client's id, or the silo the call claimed to come from without
    /// holding that silo's key; null when it came from outside any grain.
    /// </summary>
    [Id(1)] public string? Caller { get; private set; }
}
