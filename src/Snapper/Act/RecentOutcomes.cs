using System.Runtime.InteropServices;
using Snapper.Hybrid;

namespace Snapper.Act;

/// <summary>
/// Decisions on transactions that ended on this actor, kept for a while so that late messages get the
/// right answer: a prepared participant asking the first actor for the outcome, or a call arriving for a
/// transaction that this actor already aborted. Entries older than the retention are pruned.
/// </summary>
internal sealed class RecentOutcomes
{
    private readonly Dictionary<long, (TxnOutcome Outcome, long At)> _outcomes = new();

    // Commits some participants have not acknowledged yet: who is still to hear it, what the commit message carries, and
    // when it was last sent (Environment.TickCount64).
    private readonly Dictionary<long, (HashSet<GrainId> Waiting, BatchPosition MaxBefore, long SentAt)> _unacknowledged = new();

    public void Record(long tid, TxnOutcome outcome) => _outcomes[tid] = (outcome, Environment.TickCount64);

    /// <summary>
    /// Remembers that <paramref name="participants"/> have not acknowledged the commit of <paramref name="tid"/>, whose
    /// message carried <paramref name="maxBefore"/>.
    /// </summary>
    public void AwaitAcknowledgements(long tid, IEnumerable<GrainId> participants, BatchPosition maxBefore) =>
        _unacknowledged[tid] = ([.. participants], maxBefore, Environment.TickCount64);

    /// <summary>
    /// <paramref name="participant"/> acknowledged a commit message of <paramref name="tid"/> (it answers one once it has
    /// applied the commit, or had already); returns true when it was the last one still to hear it. A participant's
    /// question about the outcome is no acknowledgement (see <see cref="ActParticipant{TState}.Resolve"/>).
    /// </summary>
    public bool Acknowledge(long tid, GrainId participant) =>
        _unacknowledged.TryGetValue(tid, out var entry) && entry.Waiting.Remove(participant) && entry.Waiting.Count == 0 && _unacknowledged.Remove(tid);

    /// <summary>
    /// The commits whose message was last sent longer than <paramref name="ago"/> and that some participant has still not
    /// acknowledged, each with those participants; counts them as sent again now.
    /// </summary>
    public List<(long Tid, GrainId[] Participants, BatchPosition MaxBefore)> ToSendAgain(TimeSpan ago)
    {
        var now = Environment.TickCount64;
        var due = new List<(long, GrainId[], BatchPosition)>();
        foreach (var (tid, entry) in _unacknowledged)
        {
            if (now - entry.SentAt > (long)ago.TotalMilliseconds)
            {
                due.Add((tid, [.. entry.Waiting], entry.MaxBefore));
            }
        }

        foreach (var (tid, _, _) in due)
        {
            CollectionsMarshal.GetValueRefOrNullRef(_unacknowledged, tid).SentAt = now;
        }

        return due;
    }

    public void Forget(long tid)
    {
        _outcomes.Remove(tid);
        _unacknowledged.Remove(tid);
    }

    public bool TryGet(long tid, out TxnOutcome outcome)
    {
        var found = _outcomes.TryGetValue(tid, out var entry);
        outcome = entry.Outcome;
        return found;
    }

    public int Count => _outcomes.Count;

    /// <summary>Whether a commit decided here still waits for a participant to hear it (a migration waits for none).</summary>
    public bool HasUnacknowledgedCommits => _unacknowledged.Count > 0;

    /// <summary>Commits some participant has not acknowledged yet.</summary>
    public int UnacknowledgedCount => _unacknowledged.Count;

    /// <summary>
    /// Forgets outcomes older than <paramref name="retention"/>; with <paramref name="keepUnacknowledged"/>, not commits some
    /// participant has still to acknowledge (without a log, nothing else answers for them: a participant asking later would
    /// hear "aborted", presumed abort, and drop a committed write).
    /// </summary>
    public void Prune(TimeSpan retention, bool keepUnacknowledged = false)
    {
        var cutoff = Environment.TickCount64 - (long)retention.TotalMilliseconds;
        foreach (var (tid, entry) in _outcomes)
        {
            if (entry.At < cutoff && !(keepUnacknowledged && _unacknowledged.ContainsKey(tid)))
            {
                // With a log, its open commits still answer for it (see ActParticipant.Resolve).
                _outcomes.Remove(tid);
                _unacknowledged.Remove(tid);
            }
        }
    }
}
