using System.Collections.Concurrent;
using System.Diagnostics;
using Snapper.Workloads.Ledger;

namespace Snapper.ClusterKillCheck;

/// <summary>
/// Loops that each submit one transfer at a time until told to stop, recording every operation and its outcome. The
/// driving script controls the run through files in the run folder: <c>phase</c> names what it is doing to the cluster
/// (each operation is tagged with the phase it started and ended in), <c>stop</c> ends the load. The load reports
/// its counts in <c>progress</c> (one line, replaced every quarter second) for the script to wait on.
/// </summary>
internal sealed class LedgerLoad(IGrainFactory grains, LedgerAccounts accounts, Options options, MigrationLoad? migrations = null)
{
    private readonly ConcurrentDictionary<long, Op> _ops = new();
    private readonly int[] _counts = new int[Enum.GetValues<Outcome>().Length];
    private readonly Stopwatch _clock = new();
    private readonly int[] _committedByKind = new int[4]; // ACT local, ACT global, PACT local, PACT global
    private long _nextOp;
    private volatile string _phase = "start";
    private volatile bool _stopping;
    private Task[] _loops = [];

    public ICollection<Op> Ops => _ops.Values;

    public double Elapsed => _clock.Elapsed.TotalSeconds;

    public string Phase => _phase;

    /// <summary>Runs the load until the script creates the stop file or <see cref="Options.MaxLoad"/> passed; the loops are still finishing their last operation.</summary>
    public async Task RunAsync()
    {
        _clock.Start();
        ReadPhase();
        _loops = Enumerable.Range(0, options.Concurrency).Select(loop => Task.Run(() => LoopAsync(options.Seed * 1_000 + loop))).ToArray();
        var lastPrint = 0.0;
        while (true)
        {
            await Task.Delay(250);
            ReadPhase();
            var stopFile = File.Exists(Path.Combine(options.Dir, "stop"));
            var stop = stopFile || _clock.Elapsed >= options.MaxLoad;
            WriteProgress();
            if (Elapsed - lastPrint >= 5 || stop)
            {
                lastPrint = Elapsed;
                Console.WriteLine($"[{Elapsed,6:0.0}s] {ProgressLine()}");
            }

            if (stop)
            {
                Console.WriteLine(stopFile ? "stop file found: load stopping" : $"load stopping after its limit of {options.MaxLoad.TotalSeconds:0} s (no stop file)");
                _stopping = true;
                return;
            }
        }
    }

    /// <summary>Waits, within <paramref name="bound"/>, for the operations in flight; those still running stay <see cref="Outcome.Pending"/>.</summary>
    public async Task<bool> DrainAsync(TimeSpan bound)
    {
        try
        {
            await Task.WhenAll(_loops).WaitAsync(bound);
            return true;
        }
        catch (TimeoutException)
        {
            return false;
        }
        finally
        {
            foreach (var op in _ops.Values)
            {
                op.Freeze();
            }

            WriteProgress();
        }
    }

    private async Task LoopAsync(int seed)
    {
        var random = new Random(seed);
        while (!_stopping)
        {
            var op = Next(random);
            _ops[op.Id] = op;
            var (outcome, detail, tid) = await SubmitAsync(op);
            op.Finish(outcome, detail, tid, _phase, Elapsed);
            Interlocked.Increment(ref _counts[(int)outcome]);
            if (outcome == Outcome.Committed)
            {
                Interlocked.Increment(ref _committedByKind[KindIndex(op.Pact, op.Global)]);
            }
            else if (!(outcome == Outcome.Aborted && detail.StartsWith(nameof(AbortReason.WaitDie), StringComparison.Ordinal)))
            {
                // A silo is down or slow: no point in failing hundreds of operations a second until it is back. Wait-die
                // aborts are ordinary conflicts and go on at once.
                await Task.Delay(100);
            }
        }
    }

    private async Task<(Outcome, string, long?)> SubmitAsync(Op op)
    {
        var from = grains.GetGrain<ILedgerAccount>(op.From);
        var move = new LedgerMove(op.Id, op.To, op.Amount);
        try
        {
            if (op.Pact)
            {
                // Move withdraws on the first account and calls Credit once on each target: one access each.
                var accesses = new ActorAccessInfo().Add(from);
                foreach (var to in op.To)
                {
                    accesses.Add(grains.GetGrain<ILedgerAccount>(to));
                }

                await from.StartTxn(from.Move, move, accesses);
            }
            else
            {
                await from.StartTxn(from.Move, move);
            }

            return (Outcome.Committed, "", null);
        }
        catch (TransactionAbortedException e)
        {
            return (Outcome.Aborted, $"{e.Reason}: {Messages.FirstLine(e.Message)}", e.Tid);
        }
        catch (WorkerUnavailableException e)
        {
            return (Outcome.Unavailable, $"{e.Silo}: {Messages.FirstLine(e.Message)}", null);
        }
        catch (TransactionInDoubtException e)
        {
            return (Outcome.InDoubt, Messages.FirstLine(e.Message), e.Tid);
        }
        catch (Exception e)
        {
            return (Outcome.Unknown, $"{e.GetType().Name}: {Messages.FirstLine(e.Message)}", null);
        }
    }

    /// <summary>
    /// A transfer of one of four kinds, equally likely: ACT or PACT, local (every account on one worker) or global (the
    /// first target on another worker than the withdrawing account, the others anywhere). One to three targets.
    /// </summary>
    private Op Next(Random random)
    {
        var pact = random.Next(2) == 0;
        var global = random.Next(2) == 0;
        var home = random.Next(accounts.Workers);
        var local = accounts.OnWorker(home);
        var from = local[random.Next(local.Length)];
        var targets = random.Next(1, 4);
        var to = new List<long>(targets);
        if (global)
        {
            var other = accounts.OnWorker((home + 1 + random.Next(accounts.Workers - 1)) % accounts.Workers);
            to.Add(other[random.Next(other.Length)]);
        }

        var pool = global ? accounts.All : local;
        while (to.Count < targets)
        {
            var candidate = pool[random.Next(pool.Length)];
            if (candidate != from && !to.Contains(candidate))
            {
                to.Add(candidate);
            }
        }

        return new Op(Interlocked.Increment(ref _nextOp), pact, global, from, [.. to], random.Next(1, 100), _phase, Elapsed);
    }

    private void ReadPhase()
    {
        try
        {
            var text = File.ReadAllText(Path.Combine(options.Dir, "phase")).Trim();
            if (text.Length > 0 && text != _phase)
            {
                Console.WriteLine($"[{Elapsed,6:0.0}s] phase {text}");
                _phase = text;
            }
        }
        catch (IOException)
        {
            // No phase file yet, or the script is replacing it: keep the phase we have.
        }
    }

    private int Count(Outcome outcome) => Volatile.Read(ref _counts[(int)outcome]);

    private static int KindIndex(bool pact, bool global) => (pact ? 2 : 0) + (global ? 1 : 0);

    private int Committed(bool pact, bool global) => Volatile.Read(ref _committedByKind[KindIndex(pact, global)]);

    private string ProgressLine()
    {
        var started = Interlocked.Read(ref _nextOp);
        var finished = _counts.Sum();
        return $"phase={_phase} started={started} committed={Count(Outcome.Committed)} " +
            $"act_local={Committed(false, false)} act_global={Committed(false, true)} pact_local={Committed(true, false)} pact_global={Committed(true, true)} " +
            $"aborted={Count(Outcome.Aborted)} unavailable={Count(Outcome.Unavailable)} in_doubt={Count(Outcome.InDoubt)} " +
            $"unknown={Count(Outcome.Unknown)} in_flight={started - finished}" +
            (migrations is null ? "" : $" migrated={migrations.Moved} migration_failed={migrations.Failed}");
    }

    /// <summary>Replaces the progress file whole (write, then rename), so the script never reads half a line.</summary>
    private void WriteProgress()
    {
        var path = Path.Combine(options.Dir, "progress");
        File.WriteAllText(path + ".tmp", $"elapsed={Elapsed:0.0} {ProgressLine()}\n");
        File.Move(path + ".tmp", path, overwrite: true);
    }
}
