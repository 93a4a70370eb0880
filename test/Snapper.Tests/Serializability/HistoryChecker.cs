namespace Snapper.Tests.Serializability;

/// <summary>A transaction of a recorded history: what it observed, whether the client saw it commit, and its kind (for reports).</summary>
public sealed record RecordedTxn(long Id, bool Committed, IReadOnlyList<Observation> Observations, string Kind = "transaction");

/// <summary>
/// Checks a recorded history for conflict serializability. Per actor, the final writer list is the order
/// of its writes (ww edges); a committed transaction that saw the first k writers of an actor read after
/// writer k (wr edge) and before writer k+1 (rw edge). The history is serializable iff this graph has no
/// cycle; besides, every committed write must be in the final list and no aborted one may be.
/// </summary>
public static class HistoryChecker
{
    /// <summary>Returns what is wrong with the history, or an empty list.</summary>
    public static IReadOnlyList<string> Check(IReadOnlyList<RecordedTxn> history, IReadOnlyDictionary<long, long[]> finalWriters)
    {
        var problems = new List<string>();
        var committed = history.Where(t => t.Committed).ToDictionary(t => t.Id);
        var aborted = history.Where(t => !t.Committed).Select(t => t.Id).ToHashSet();
        var edges = committed.Keys.ToDictionary(id => id, _ => new HashSet<long>());

        foreach (var (actor, writers) in finalWriters)
        {
            foreach (var ghost in writers.Where(aborted.Contains))
            {
                problems.Add($"actor {actor}: aborted transaction {ghost} is visible");
            }

            foreach (var unknown in writers.Where(w => !committed.ContainsKey(w) && !aborted.Contains(w)))
            {
                problems.Add($"actor {actor}: writer {unknown} was never submitted");
            }

            var order = writers.Where(committed.ContainsKey).ToArray();
            for (var i = 1; i < order.Length; i++)
            {
                edges[order[i - 1]].Add(order[i]);
            }
        }

        foreach (var txn in committed.Values)
        {
            foreach (var access in txn.Observations.GroupBy(o => o.Actor))
            {
                var actor = access.Key;
                var writers = finalWriters.GetValueOrDefault(actor) ?? [];
                if (access.Any(o => o.Wrote) && !writers.Contains(txn.Id))
                {
                    problems.Add($"actor {actor}: committed write of {txn.Kind} {txn.Id} is missing (it saw writers [{string.Join(", ", access.First().Seen)}]; final [{string.Join(", ", writers)}])");
                }

                // Under strict locking every access of one transaction to an actor sees the same writers.
                var seen = access.First().Seen;
                if (access.Any(o => !o.Seen.SequenceEqual(seen)))
                {
                    problems.Add($"actor {actor}: transaction {txn.Id} saw different states on repeated accesses");
                }

                var others = writers.Where(w => w != txn.Id).ToArray();
                if (seen.Length > others.Length || !others.Take(seen.Length).SequenceEqual(seen))
                {
                    problems.Add($"actor {actor}: transaction {txn.Id} read [{string.Join(',', seen)}], which is no prefix of the write order [{string.Join(',', writers)}]");
                    continue;
                }

                if (seen.Length > 0)
                {
                    AddEdge(edges, seen[^1], txn.Id);
                }

                if (seen.Length < others.Length)
                {
                    AddEdge(edges, txn.Id, others[seen.Length]);
                }
            }
        }

        if (FindCycle(edges) is { } cycle)
        {
            problems.Add($"conflict graph has a cycle: {string.Join(" -> ", cycle)}");
        }

        return problems;
    }

    private static void AddEdge(Dictionary<long, HashSet<long>> edges, long from, long to)
    {
        if (from != to && edges.TryGetValue(from, out var next) && edges.ContainsKey(to))
        {
            next.Add(to);
        }
    }

    /// <summary>A cycle in the graph, as the list of its nodes (first repeated at the end), or null.</summary>
    private static List<long>? FindCycle(Dictionary<long, HashSet<long>> edges)
    {
        var state = new Dictionary<long, int>(); // 0 unvisited, 1 on the stack, 2 done
        var parent = new Dictionary<long, long>();
        foreach (var start in edges.Keys)
        {
            if (state.GetValueOrDefault(start) != 0)
            {
                continue;
            }

            // Iterative DFS: histories have thousands of transactions, too deep for recursion.
            var stack = new Stack<(long Node, IEnumerator<long> Next)>();
            stack.Push((start, edges[start].GetEnumerator()));
            state[start] = 1;
            while (stack.Count > 0)
            {
                var (node, next) = stack.Peek();
                if (!next.MoveNext())
                {
                    state[node] = 2;
                    stack.Pop();
                    continue;
                }

                var child = next.Current;
                switch (state.GetValueOrDefault(child))
                {
                    case 0:
                        state[child] = 1;
                        parent[child] = node;
                        stack.Push((child, edges[child].GetEnumerator()));
                        break;
                    case 1:
                        var cycle = new List<long> { child };
                        for (var at = node; at != child; at = parent[at])
                        {
                            cycle.Add(at);
                        }

                        cycle.Add(child);
                        cycle.Reverse();
                        return cycle;
                }
            }
        }

        return null;
    }
}
