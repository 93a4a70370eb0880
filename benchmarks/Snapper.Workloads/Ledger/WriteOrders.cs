namespace Snapper.Workloads.Ledger;

/// <summary>
/// Every ledger operation writes each account it touches, so each account's list of applied operations is a
/// serialization order; serializable histories need these orders to agree, that is, together to form no cycle.
/// </summary>
public static class WriteOrders
{
    /// <summary>The operations on or after a cycle of the orders (Kahn's sort leaves them unsorted), in id order; empty if there is none.</summary>
    public static long[] OnACycle(IEnumerable<IReadOnlyList<long>> orders)
    {
        var edges = new Dictionary<long, HashSet<long>>();
        var indegree = new Dictionary<long, int>();
        foreach (var order in orders)
        {
            foreach (var op in order)
            {
                indegree.TryAdd(op, 0);
            }

            for (var i = 1; i < order.Count; i++)
            {
                if (order[i - 1] != order[i] && (edges.TryGetValue(order[i - 1], out var next) ? next : edges[order[i - 1]] = []).Add(order[i]))
                {
                    indegree[order[i]]++;
                }
            }
        }

        var ready = new Queue<long>(indegree.Where(d => d.Value == 0).Select(d => d.Key));
        while (ready.TryDequeue(out var op))
        {
            foreach (var next in edges.GetValueOrDefault(op) ?? [])
            {
                if (--indegree[next] == 0)
                {
                    ready.Enqueue(next);
                }
            }
        }

        return [.. indegree.Where(d => d.Value > 0).Select(d => d.Key).Order()];
    }
}
