namespace Snapper.Act;

/// <summary>A participant's answer to <see cref="IActParticipant.Prepare"/>.</summary>
[GenerateSerializer]
public enum PrepareVote
{
    /// <summary>The participant wrote and is prepared; it waits for the decision with its lock held.</summary>
    Prepared,

    /// <summary>The participant only read; it released its lock and needs no decision.</summary>
    ReadOnly,

    /// <summary>The participant cannot commit (unknown transaction, failed call, or timed out).</summary>
    No,
}
