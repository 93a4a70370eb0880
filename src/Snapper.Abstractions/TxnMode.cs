namespace Snapper;

/// <summary>The execution mode of a transaction (thesis §3.2.1).</summary>
[GenerateSerializer]
public enum TxnMode
{
    /// <summary>Actor transaction: actors are discovered while it runs; S2PL with wait-die, committed by 2PC.</summary>
    Act,

    /// <summary>Pre-declared actor transaction: actors and access counts are declared up front and ordered deterministically.</summary>
    Pact,
}
