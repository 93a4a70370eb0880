namespace Snapper.Act;

/// <summary>
/// Decisions on transactions that ended on this actor, kept for a while so that late messages get the
/// right answer: a prepared participant asking the first actor for the outcome, or a call arriving for a
/// transaction that this actor already aborted. Entries older than the retention are pruned.
/// </summary>
internal sealed class RecentOutcomes
{
    private readonly Dictionary<long, (TxnOutcome Outcome, long At)> _outcomes = new();

    public void Record(long tid, TxnOutcome outcome) => _outcomes[tid] = (outcome, Environment.TickCount64);

    public void Forget(long tid) => _outcomes.Remove(tid);

    public bool TryGet(long tid, out TxnOutcome outcome)
    {
        var found = _outcomes.TryGetValue(tid, out var entry);
        outcome = entry.Outcome;
        return found;
    }

    public int Count => _outcomes.Count;

    public void Prune(TimeSpan retention)
    {
        var cutoff = Environment.TickCount64 - (long)retention.TotalMilliseconds;
        foreach (var (tid, entry) in _outcomes)
        {
            if (entry.At < cutoff)
            {
                _outcomes.Remove(tid);
            }
        }
    }
}
