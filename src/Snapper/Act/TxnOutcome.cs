namespace Snapper.Act;

/// <summary>The decision on a transaction.</summary>
[GenerateSerializer]
internal enum TxnOutcome
{
    /// <summary>Committed: its writes are installed.</summary>
    Committed,

    /// <summary>Aborted, or unknown (presumed abort).</summary>
    Aborted,
}
