namespace Snapper;

/// <summary>How a transaction accesses an actor's state through <c>GetState</c>.</summary>
[GenerateSerializer]
public enum AccessMode
{
    /// <summary>Read only: a shared lock for an ACT; the state is not installed at commit.</summary>
    Read,

    /// <summary>Read and write: an exclusive lock for an ACT; the transaction's copy is installed at commit.</summary>
    ReadWrite,
}
