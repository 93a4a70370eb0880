using System.Text;
using Snapper.Workloads.Ledger;

namespace Snapper.ClusterKillCheck;

/// <summary>
/// Compares what the client recorded with what the accounts hold after the run. Violations (each fails the test):
/// an acknowledged operation missing from an account it touched; an aborted (or refused) one present on any account;
/// one present on some of its accounts but not all (whatever the client saw); an account holding an operation twice or
/// one the client never issued, or a balance its operations do not add up to; money not conserved. Besides, the
/// accounts' write orders are checked for a cycle, reported as a warning only: the hybrid ACT/PACT serializability
/// check across workers is not built yet (README, "Status"), so a cycle there is a known gap, not a durability loss.
/// When some accounts could not be read (<paramref name="states"/> lacks them), what they hold is left out: operations
/// are judged on the accounts that were read, and the totals are not checked.
/// </summary>
internal sealed class LedgerCheck(IReadOnlyCollection<Op> ops, LedgerAccounts accounts, IReadOnlyDictionary<long, LedgerState> states, long opening)
{
    private static readonly Outcome[] Outcomes = Enum.GetValues<Outcome>();
    private readonly Dictionary<long, Op> _byId = ops.ToDictionary(o => o.Id);

    public List<string> Violations { get; } = new();

    public List<string> Warnings { get; } = new();

    /// <summary>Whether some accounts could not be read, so that the check covered only the others.</summary>
    public bool Incomplete => states.Count < accounts.All.Length;

    private IEnumerable<long> Unread => accounts.All.Where(id => !states.ContainsKey(id));

    /// <summary>How each operation of an uncertain outcome (in doubt, unknown, pending) turned out: applied or not.</summary>
    private readonly Dictionary<(Outcome, bool Applied), int> _settled = new();

    public void Run()
    {
        foreach (var op in ops.OrderBy(o => o.Id))
        {
            CheckOp(op);
        }

        foreach (var (id, state) in states)
        {
            CheckAccount(id, state);
        }

        if (Incomplete)
        {
            Warnings.Add($"{accounts.All.Length - states.Count} accounts could not be read: [{string.Join(", ", Unread.Select(accounts.Label))}]; " +
                "operations were checked on the other accounts only, the total balance and the write orders not at all");
            return;
        }

        var total = states.Values.Sum(s => s.Balance);
        var expected = opening * accounts.All.Length;
        if (total != expected)
        {
            Violations.Add($"money not conserved: the accounts hold {total} in all, {expected} were opened ({total - expected:+#;-#})");
        }

        CheckOrder();
    }

    private void CheckOp(Op op)
    {
        var read = op.Accounts.Where(states.ContainsKey).ToArray();
        var has = read.Where(id => states[id].Applied.Contains(op.Id)).ToArray();
        var lacks = read.Where(id => !states[id].Applied.Contains(op.Id)).ToArray();
        var unread = op.Accounts.Except(read).ToArray();
        var all = lacks.Length == 0;
        var none = has.Length == 0;
        string? problem = op.Outcome switch
        {
            Outcome.Committed when !all => "LOST: acknowledged as committed but missing",
            Outcome.Aborted or Outcome.Unavailable when !none => "ABORTED BUT APPLIED: reported as not run but present",
            _ when !all && !none => "PARTIAL: present on some of its accounts only",
            _ => null,
        };
        if (op.Outcome is Outcome.InDoubt or Outcome.Unknown or Outcome.Pending && (all || none) && unread.Length == 0)
        {
            _settled[(op.Outcome, all)] = _settled.GetValueOrDefault((op.Outcome, all)) + 1;
        }

        if (problem is not null)
        {
            Violations.Add($"op {op.Id} {problem} (on {has.Length} of its {op.To.Length + 1} accounts{(unread.Length > 0 ? $", {read.Length} read" : "")}): {Describe(op)}; " +
                $"has it: [{string.Join(", ", has.Select(accounts.Label))}]; lacks it: [{string.Join(", ", lacks.Select(accounts.Label))}]" +
                (unread.Length > 0 ? $"; not read: [{string.Join(", ", unread.Select(accounts.Label))}]" : ""));
        }
    }

    private void CheckAccount(long id, LedgerState state)
    {
        var label = accounts.Label(id);
        foreach (var twice in state.Applied.GroupBy(o => o).Where(g => g.Count() > 1))
        {
            Violations.Add($"account {label} holds op {twice.Key} {twice.Count()} times");
        }

        var unknown = state.Applied.Where(o => !_byId.ContainsKey(o)).ToArray();
        if (unknown.Length > 0)
        {
            Violations.Add($"account {label} holds ops the client never issued: {string.Join(", ", unknown.Take(20))}");
            return;
        }

        // Each applied operation once (a duplicate was reported above): the balance they give.
        var balance = opening + state.Applied.Distinct().Sum(o => _byId[o] is var op && op.From == id ? -op.Amount * op.To.Length : _byId[o].Amount);
        if (balance != state.Balance)
        {
            Violations.Add($"account {label} holds {state.Balance}, but its {state.Applied.Count} applied ops give {balance}");
        }
    }

    /// <summary>Every operation writes each of its accounts, so each account's list is a serialization order; together they must not form a cycle.</summary>
    private void CheckOrder()
    {
        var stuck = WriteOrders.OnACycle(states.Values.Select(s => s.Applied));
        if (stuck.Length > 0)
        {
            Warnings.Add($"the accounts' write orders form a cycle: {stuck.Length} ops are on or after it, e.g. " +
                string.Join("; ", stuck.Take(6).Select(o => _byId.TryGetValue(o, out var op) ? $"op {o} {Describe(op)}" : $"op {o}")));
        }
    }

    private string Describe(Op op) =>
        $"{op.Kind} {accounts.Label(op.From)} -> [{string.Join(", ", op.To.Select(accounts.Label))}] amount {op.Amount}, " +
        $"submitted at {op.Started:0.0} s in phase {op.Phase}, " +
        (op.Outcome == Outcome.Pending ? "still pending at the stop" : $"{op.Outcome} at {op.Ended:0.0} s in phase {op.EndPhase}") +
        (op.Tid is { } tid ? $", tid {tid}" : "") +
        (op.Detail.Length > 0 ? $" ({op.Detail})" : "");

    /// <summary>Counts per kind and outcome, per phase, the reasons, how uncertain outcomes settled, then the violations.</summary>
    public string Report()
    {
        var text = new StringBuilder();
        text.AppendLine("operations by kind (ACT/PACT x local/global) and outcome:");
        Table(text, "kind", ops.GroupBy(o => o.Kind).OrderBy(g => g.Key, StringComparer.Ordinal));
        text.AppendLine("operations by the phase they were submitted in:");
        Table(text, "phase", ops.GroupBy(o => o.Phase).OrderBy(g => g.Min(o => o.Id)));

        foreach (var outcome in new[] { Outcome.Aborted, Outcome.Unavailable, Outcome.InDoubt, Outcome.Unknown })
        {
            var reasons = ops.Where(o => o.Outcome == outcome)
                .GroupBy(o => Reason(o.Detail))
                .OrderByDescending(g => g.Count())
                .Select(g => $"{g.Key} {g.Count()}")
                .ToArray();
            if (reasons.Length > 0)
            {
                text.AppendLine($"{outcome}: {string.Join(", ", reasons)}");
            }
        }

        foreach (var outcome in new[] { Outcome.InDoubt, Outcome.Unknown, Outcome.Pending })
        {
            var applied = _settled.GetValueOrDefault((outcome, true));
            var notApplied = _settled.GetValueOrDefault((outcome, false));
            if (applied + notApplied > 0)
            {
                text.AppendLine($"{outcome} ops settled all-or-nothing: {applied} applied on all their accounts, {notApplied} on none");
            }
        }

        text.AppendLine($"accounts: {accounts.All.Length} ({string.Join(", ", Enumerable.Range(0, accounts.Workers).Select(w => $"{accounts.OnWorker(w).Length} on worker-{w}"))}), " +
            (Incomplete ? $"{states.Count} read" : $"total balance {states.Values.Sum(s => s.Balance)} (opened {opening * accounts.All.Length})") +
            $", {states.Values.Sum(s => s.Applied.Count)} applications");
        foreach (var warning in Warnings)
        {
            text.AppendLine($"warning (not counted as a violation): {warning}");
        }

        text.AppendLine($"violations: {Violations.Count}");
        foreach (var violation in Violations.Take(100))
        {
            text.AppendLine($"  {violation}");
        }

        if (Violations.Count > 100)
        {
            text.AppendLine($"  ... and {Violations.Count - 100} more (all in violations.txt)");
        }

        return text.ToString();
    }

    private static void Table(StringBuilder text, string title, IEnumerable<IGrouping<string, Op>> rows)
    {
        text.AppendLine($"  {title,-22} {"total",7}" + string.Concat(Outcomes.Select(o => $" {o,11}")));
        foreach (var row in rows)
        {
            text.AppendLine($"  {row.Key,-22} {row.Count(),7}" + string.Concat(Outcomes.Select(o => $" {row.Count(op => op.Outcome == o),11}")));
        }
    }

    /// <summary>The reason without the message: the abort reason, the silo, or the exception type.</summary>
    private static string Reason(string detail) => detail.Split(':', 2)[0];
}
