namespace Snapper.Workloads;

/// <summary>Draws the distinct actor indexes of one transaction.</summary>
public interface IKeyChooser
{
    /// <summary><paramref name="count"/> distinct actor indexes, drawn with the client loop's random source.</summary>
    int[] NextDistinct(Random random, int count);
}

/// <summary>
/// A way of choosing each transaction's actors that replaces a workload's own draw over all of them, e.g. to control
/// which workers of a cluster a transaction spans. Where an actor lives can depend on its grain id, which only the grain
/// factory a client loop runs against knows: each loop binds the choice to its factory before its first draw.
/// </summary>
public interface IKeyChoice
{
    /// <summary>What the choice adds to the workload's parameters (the CSV's params column).</summary>
    IReadOnlyList<KeyValuePair<string, string>> Parameters { get; }

    /// <summary>The chooser a client loop running against <paramref name="grains"/> draws from.</summary>
    IKeyChooser Bind(IGrainFactory grains);
}
