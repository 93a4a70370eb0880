namespace Snapper.Runner.Experiment;

/// <summary>What the client loops of one mode saw: committed and aborted transactions, the latency of the committed ones, aborts by reason.</summary>
public sealed record ModeTotals(long Committed, long Aborted, TimeSpan CommittedLatency, IReadOnlyDictionary<string, long> AbortsByReason)
{
    public static ModeTotals Zero { get; } = new(0, 0, TimeSpan.Zero, new Dictionary<string, long>());

    /// <summary>Mean latency of the committed transactions in milliseconds (NaN when none committed).</summary>
    public double MeanLatencyMs => Committed == 0 ? double.NaN : CommittedLatency.TotalMilliseconds / Committed;

    /// <summary>What happened between <paramref name="earlier"/> and these totals.</summary>
    public ModeTotals Since(ModeTotals earlier) => new(
        Committed - earlier.Committed,
        Aborted - earlier.Aborted,
        CommittedLatency - earlier.CommittedLatency,
        AbortsByReason
            .Select(a => (a.Key, Count: a.Value - earlier.AbortsByReason.GetValueOrDefault(a.Key)))
            .Where(a => a.Count != 0)
            .ToDictionary(a => a.Key, a => a.Count, StringComparer.Ordinal));
}
