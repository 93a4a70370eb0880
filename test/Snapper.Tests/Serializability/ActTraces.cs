using System.Collections.Concurrent;

namespace Snapper.Tests.Serializability;

/// <summary>
/// The steps of the ACTs of a history, as Snapper's commit protocol took them on each actor (the test hook
/// <see cref="Hosting.SnapperTestHooks.ActTrace"/>), so that a history the checker finds wrong says what happened to the
/// transactions it names. Only silos whose hooks record here are followed (the fixture with every bound tight).
/// </summary>
internal static class ActTraces
{
    private static readonly ConcurrentDictionary<long, ConcurrentQueue<string>> Steps = new();
    private static readonly ConcurrentDictionary<long, ConcurrentDictionary<long, byte>> TidsOfTxn = new();

    /// <summary>The hook: one step of ACT <paramref name="tid"/> on <paramref name="actor"/>.</summary>
    public static void Record(GrainId actor, long tid, string what) =>
        Steps.GetOrAdd(tid, static _ => new()).Enqueue($"{DateTime.UtcNow:HH:mm:ss.fff} {actor}: {what}");

    /// <summary>A step of history transaction <paramref name="txn"/> ran as ACT <paramref name="tid"/> (each attempt has its own tid).</summary>
    public static void RanAs(long txn, long tid) => TidsOfTxn.GetOrAdd(txn, static _ => new())[tid] = 0;

    /// <summary>What was recorded of history transaction <paramref name="txn"/>, tid by tid.</summary>
    public static IEnumerable<string> Of(long txn) =>
        TidsOfTxn.TryGetValue(txn, out var tids)
            ? tids.Keys.Order().SelectMany(tid => (Steps.TryGetValue(tid, out var steps) ? steps.ToArray() : ["(no steps recorded)"]).Select(step => $"  tid {tid} {step}"))
            : ["  (no ACT step recorded)"];

    /// <summary>Forgets the transactions <paramref name="txns"/> of a finished history.</summary>
    public static void Forget(IEnumerable<long> txns)
    {
        foreach (var txn in txns)
        {
            if (TidsOfTxn.TryRemove(txn, out var tids))
            {
                foreach (var tid in tids.Keys)
                {
                    Steps.TryRemove(tid, out _);
                }
            }
        }
    }
}
