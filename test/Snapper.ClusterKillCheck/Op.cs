namespace Snapper.ClusterKillCheck;

/// <summary>What the client learned of an operation; decides what the check expects of it.</summary>
internal enum Outcome
{
    /// <summary>Acknowledged: it must be on every account it touched.</summary>
    Committed,

    /// <summary><see cref="TransactionAbortedException"/>: "nothing of it remains", so it must be on no account.</summary>
    Aborted,

    /// <summary><see cref="WorkerUnavailableException"/>: "nothing of the transaction ran", so it must be on no account.</summary>
    Unavailable,

    /// <summary><see cref="TransactionInDoubtException"/>: either outcome, but all or nothing.</summary>
    InDoubt,

    /// <summary>Any other failure (response timeout, connection to the gateway lost): either outcome, but all or nothing.</summary>
    Unknown,

    /// <summary>Still running when the load was stopped and drained: either outcome, but all or nothing.</summary>
    Pending,
}

/// <summary>
/// One transfer: <see cref="Amount"/> from <see cref="From"/> to each of <see cref="To"/>, as an ACT or a PACT, on
/// accounts of one worker (local) or of several (global, a distributed transaction).
/// </summary>
internal sealed class Op(long id, bool pact, bool global, long from, long[] to, long amount, string phase, double started)
{
    public long Id { get; } = id;

    public bool Pact { get; } = pact;

    public bool Global { get; } = global;

    public long From { get; } = from;

    public long[] To { get; } = to;

    public long Amount { get; } = amount;

    /// <summary>The phase (see test/cluster-kill-test.sh) the cluster was in when the operation was submitted.</summary>
    public string Phase { get; } = phase;

    /// <summary>Seconds since the load started, at submission.</summary>
    public double Started { get; } = started;

    // Written once by the loop that ran the operation, read after the loops ended (or by the progress line, where a
    // stale value only delays a count).
    public Outcome Outcome { get; private set; } = Outcome.Pending;

    /// <summary>The abort reason or the exception's type, with its message for the report.</summary>
    public string Detail { get; private set; } = "";

    /// <summary>The transaction id, when the exception named one.</summary>
    public long? Tid { get; private set; }

    public string EndPhase { get; private set; } = "";

    public double Ended { get; private set; }

    public string Kind => Describe(Pact, Global);

    public IEnumerable<long> Accounts => To.Prepend(From);

    public static string Describe(bool pact, bool global) => $"{(pact ? "PACT" : "ACT")} {(global ? "global" : "local")}";

    private readonly Lock _lock = new();
    private bool _frozen;

    public void Finish(Outcome outcome, string detail, long? tid, string phase, double ended)
    {
        lock (_lock)
        {
            if (_frozen)
            {
                return;
            }

            Detail = detail;
            Tid = tid;
            EndPhase = phase;
            Ended = ended;
            Outcome = outcome;
        }
    }

    /// <summary>
    /// Keeps the outcome as it is now (still <see cref="Outcome.Pending"/> if unfinished): once the check began, an
    /// answer arriving late must not change what it is checking.
    /// </summary>
    public void Freeze()
    {
        lock (_lock)
        {
            _frozen = true;
        }
    }
}
