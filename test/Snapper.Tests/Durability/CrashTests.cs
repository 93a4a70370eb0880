using System.Collections.Concurrent;
using Snapper.Workloads.Ledger;
using Xunit;
using Xunit.Abstractions;

namespace Snapper.Tests.Durability;

/// <summary>
/// Crash recovery with real processes (thesis §3.3.2.5, §3.3.3.4): a silo runs a mixed PACT/ACT ledger workload
/// that moves money between accounts, is killed with SIGKILL at a random moment, and is restarted on the same data
/// folder. After each restart: every transaction the client saw committed is there, none it saw aborted is, those
/// cut off by the kill are all-or-nothing, money is conserved, and the per-account write orders are acyclic.
/// Every other pair of rounds keeps its accounts as keys of key-value actors (branches of four accounts), whose
/// states are logged incrementally, so kills land between change records, checkpoints folding them, and recovery.
/// Seeded: a failure names its kill point. CI runs 20 kill points; SNAPPER_CRASH_POINTS=200 runs the long version.
/// </summary>
public sealed class CrashTests(ITestOutputHelper output) : IDisposable
{
    private const int Accounts = 12;
    private const long Opening = 100;
    private readonly string _folder = Path.Combine(Path.GetTempPath(), "snapper-crash", Guid.NewGuid().ToString("N"));

    private static int KillPoints => int.TryParse(Environment.GetEnvironmentVariable("SNAPPER_CRASH_POINTS"), out var n) ? n : 20;

    /// <summary>Set when a check failed: the data folder is then kept for a look at the log.</summary>
    private bool _keepFolder;

    public void Dispose()
    {
        foreach (var folder in new[] { _folder, _folder + ".at-kill" })
        {
            if (Directory.Exists(folder) && !_keepFolder)
            {
                Directory.Delete(folder, recursive: true);
            }
        }
    }

    [Fact]
    public async Task Every_acknowledged_transaction_survives_kill_9_and_nothing_else_does()
    {
        var random = new Random(2026);
        var totals = new Dictionary<Outcome, int>();
        Round? previous = null;
        // The silo alternates between one ordered logger and two (WriteAheadLog.StatesDurableBeforeVote), so both
        // logging schemes are killed, and each restart also recovers a folder the other one wrote.
        static int LoggersAt(int point) => 1 + (point % 2);
        var silo = await SiloProcess.StartAsync(_folder, LoggersAt(0));
        try
        {
            for (var point = 0; point < KillPoints; point++)
            {
                if (previous is not null)
                {
                    await VerifyAsync(previous, silo.Client);
                }

                var clock = System.Diagnostics.Stopwatch.StartNew();
                var round = new Round(point, random.Next(), keyed: point / 2 % 2 == 1);
                await round.OpenAsync(silo.Client);
                var opened = clock.Elapsed;
                var workload = round.RunAsync(silo.Client);

                // The kill comes a random moment after the round's first acknowledged commit, not after it opened: on a
                // loaded machine nothing may commit in the first few hundred milliseconds, and a kill then checks nothing.
                // Bounded: a round that commits nothing within the wait is killed anyway (the final count tells).
                await Task.WhenAny(round.FirstCommitted, Task.Delay(TimeSpan.FromSeconds(30)));
                await Task.Delay(random.Next(20, 400));
                await silo.KillAsync();

                // Calls in flight when the silo died end only at the client's response timeout; their outcome is
                // unknown either way (they stay Pending), so the test does not wait for them.
                await Task.WhenAny(workload, Task.Delay(TimeSpan.FromSeconds(1)));
                var killed = clock.Elapsed;
                await silo.DisposeAsync();
                var disposed = clock.Elapsed;

                // The folder as the kill left it: recovery folds the log into a checkpoint, so a failure found
                // after the restart can only be traced in this copy (kept with the folder when a check fails).
                CopyFolder(_folder, _folder + ".at-kill");

                silo = await SiloProcess.StartAsync(_folder, LoggersAt(point + 1));
                output.WriteLine($"point {point} ({(round.Keyed ? "key-value" : "accounts")}; {string.Join(", ", round.Counts().Select(c => $"{c.Item2} {c.Item1}"))}): opened {opened.TotalSeconds:0.0} s, killed {killed.TotalSeconds:0.0} s, disposed {disposed.TotalSeconds:0.0} s, restarted {clock.Elapsed.TotalSeconds:0.0} s");
                foreach (var (outcome, count) in round.Counts())
                {
                    totals[outcome] = totals.GetValueOrDefault(outcome) + count;
                }

                previous = round;
            }

            await VerifyAsync(previous!, silo.Client);
        }
        finally
        {
            await silo.DisposeAsync();
        }

        output.WriteLine($"{KillPoints} kill points: {string.Join(", ", totals.Select(t => $"{t.Value} {t.Key}"))}; log {FolderBytes(_folder):N0} bytes");
        Assert.True(totals.GetValueOrDefault(Outcome.Committed) > KillPoints, "too few transactions committed for the test to mean anything");
    }

    private async Task VerifyAsync(Round round, IGrainFactory grains)
    {
        try
        {
            await round.VerifyAsync(grains);
        }
        catch
        {
            _keepFolder = true;
            output.WriteLine($"data folder kept for inspection: {_folder} (and as the last kill left it: {_folder}.at-kill)");
            throw;
        }
    }

    private static void CopyFolder(string from, string to)
    {
        if (Directory.Exists(to))
        {
            Directory.Delete(to, recursive: true);
        }

        foreach (var file in Directory.EnumerateFiles(from, "*", SearchOption.AllDirectories))
        {
            var target = Path.Combine(to, Path.GetRelativePath(from, file));
            Directory.CreateDirectory(Path.GetDirectoryName(target)!);
            File.Copy(file, target);
        }
    }

    private static long FolderBytes(string folder) =>
        new DirectoryInfo(folder).EnumerateFiles("*", SearchOption.AllDirectories).Sum(f => f.Length);

    private enum Outcome
    {
        Pending,
        Committed,
        Aborted,
        CutOff,
    }

    private sealed record Op(long Id, long From, long[] To, long Amount)
    {
        public Outcome Outcome { get; set; }

        public IEnumerable<long> Accounts => To.Prepend(From);
    }

    /// <summary>
    /// One kill point: its own accounts (so states stay small while the log grows), its operations and their outcomes;
    /// <paramref name="keyed"/>: the accounts are keys of <see cref="ILedgerBranch"/> actors rather than actors of their own
    /// (half of the branches with key-level concurrency control, PACTs declaring the accounts they use).
    /// </summary>
    private sealed class Round(int point, int seed, bool keyed)
    {
        private readonly long[] _ids = Enumerable.Range(1, Accounts).Select(i => 1_000_000L + point * 100L + i).ToArray();
        private readonly ConcurrentDictionary<long, Op> _ops = new();
        private long _nextOp = point * 1_000_000L;

        public bool Keyed => keyed;

        private readonly TaskCompletionSource _firstCommitted = new(TaskCreationOptions.RunContinuationsAsynchronously);

        /// <summary>Completes when a transfer of this round was acknowledged as committed.</summary>
        public Task FirstCommitted => _firstCommitted.Task;

        public IEnumerable<(Outcome, int)> Counts() => _ops.Values.GroupBy(o => o.Outcome).Select(g => (g.Key, g.Count()));

        private static ILedgerAccount Account(IGrainFactory grains, long id) => grains.GetGrain<ILedgerAccount>(id);

        private static ILedgerBranch Branch(IGrainFactory grains, long account) => grains.GetGrain<ILedgerBranch>(LedgerBranches.BranchOf(account));

        public async Task OpenAsync(IGrainFactory grains) => await Task.WhenAll(keyed
            ? _ids.GroupBy(LedgerBranches.BranchOf).Select(branch => UntilAnsweredAsync(async () =>
            {
                var actor = grains.GetGrain<ILedgerBranch>(branch.Key);
                await actor.StartTxn(actor.Open, new BranchOpen([.. branch], Opening));
                var mirror = grains.GetGrain<ILedgerMirror>(branch.Key);
                await mirror.StartTxn(mirror.Follow, branch.ToArray()); // registering again replaces: safe to repeat
                return true;
            }))
            : _ids.Select(id => UntilAnsweredAsync(async () =>
            {
                await Account(grains, id).StartTxn(Account(grains, id).Open, Opening);
                return true;
            })));

        /// <summary>The transfer as an ACT or a PACT (declaring every actor it touches once).</summary>
        private Task TransferAsync(IGrainFactory grains, Op op, bool pact)
        {
            if (keyed)
            {
                var branch = Branch(grains, op.From);
                var move = new BranchMove(op.Id, op.From, op.To, op.Amount);
                return pact
                    ? branch.StartTxn(branch.Move, move, LedgerBranches.Declare(grains, op.Accounts))
                    : branch.StartTxn(branch.Move, move);
            }

            var from = Account(grains, op.From);
            var ledgerMove = new LedgerMove(op.Id, op.To, op.Amount);
            return pact
                ? from.StartTxn(from.Move, ledgerMove, ActorAccessInfo.Of([.. op.Accounts.Select(id => (IAddressable)Account(grains, id))]))
                : from.StartTxn(from.Move, ledgerMove);
        }

        /// <summary>Six clients submit transfers (half PACTs) until the silo dies under them.</summary>
        public Task RunAsync(IGrainFactory grains) => Task.WhenAll(Enumerable.Range(0, 6).Select(loop => Task.Run(async () =>
        {
            var random = new Random(seed + loop);
            for (var n = 0; n < 5_000; n++)
            {
                var shuffled = _ids.OrderBy(_ => random.Next()).ToArray();
                var op = new Op(Interlocked.Increment(ref _nextOp), shuffled[0], shuffled[1..random.Next(2, 5)], random.Next(1, 40));
                _ops[op.Id] = op;
                try
                {
                    await TransferAsync(grains, op, pact: random.Next(2) == 1);
                    op.Outcome = Outcome.Committed;
                    _firstCommitted.TrySetResult();
                }
                catch (TransactionAbortedException)
                {
                    op.Outcome = Outcome.Aborted;
                }
                catch (Exception)
                {
                    op.Outcome = Outcome.CutOff; // the silo died with the transaction in flight: either outcome is allowed
                    return;
                }
            }
        })));

        /// <summary>
        /// Repeats <paramref name="call"/>, within a minute, while it times out (or aborts). The client's response timeout is
        /// short (5 s) so that calls in flight at a kill end quickly; on a loaded machine the first calls to a freshly started
        /// silo (activations, recovered states, a tid range) can take longer, and a slow answer is not what this test checks.
        /// Only for idempotent calls: opening an account (it sets the balance) and reading every account.
        /// </summary>
        private static async Task<T> UntilAnsweredAsync<T>(Func<Task<T>> call)
        {
            var deadline = DateTime.UtcNow + TimeSpan.FromMinutes(1);
            while (true)
            {
                try
                {
                    return await call();
                }
                catch (Exception exception) when (exception is TimeoutException or TransactionAbortedException && DateTime.UtcNow < deadline)
                {
                }
            }
        }

        public async Task VerifyAsync(IGrainFactory grains)
        {
            var first = Account(grains, _ids[0]);
            var firstBranch = Branch(grains, _ids[0]);
            var states = (await UntilAnsweredAsync(() => keyed ? firstBranch.StartTxn(firstBranch.ReadAll, _ids) : first.StartTxn(first.ReadAll, _ids))).Select((s, i) => (Id: _ids[i], State: s)).ToDictionary(x => x.Id, x => x.State);
            var where = $"kill point {point} (seed {seed}, {(keyed ? "key-value branches" : "one actor per account")})";

            foreach (var op in _ops.Values)
            {
                var applied = op.Accounts.Count(id => states[id].Applied.Contains(op.Id));
                var expected = op.Outcome switch
                {
                    Outcome.Committed => applied == op.To.Length + 1,
                    Outcome.Aborted => applied == 0,
                    _ => applied == 0 || applied == op.To.Length + 1, // cut off by the kill: all or nothing
                };
                Assert.True(expected, $"{where}: {op.Outcome} operation {op.Id} is on {applied} of its {op.To.Length + 1} accounts");
            }

            foreach (var (id, state) in states)
            {
                Assert.True(state.Applied.Distinct().Count() == state.Applied.Count, $"{where}: account {id} applied an operation twice");
                var balance = Opening + state.Applied.Sum(opId => _ops[opId] is var op && op.From == id ? -op.Amount * op.To.Length : op.Amount);
                Assert.True(balance == state.Balance, $"{where}: account {id} holds {state.Balance}, its applied operations give {balance}");
            }

            if (keyed)
            {
                // The mirrors follow the accounts by dependency: after the restart, each holds exactly its account's state.
                foreach (var branch in _ids.GroupBy(LedgerBranches.BranchOf))
                {
                    var mirror = grains.GetGrain<ILedgerMirror>(branch.Key);
                    var copies = await UntilAnsweredAsync(() => mirror.StartTxn(mirror.Read, branch.ToArray()));
                    foreach (var (id, copy) in branch.Zip(copies))
                    {
                        Assert.True(copy is not null && copy.Balance == states[id].Balance && copy.Applied.SequenceEqual(states[id].Applied),
                            $"{where}: the mirror of account {id} holds {copy?.Balance} after {copy?.Applied.Count} operations, the account {states[id].Balance} after {states[id].Applied.Count}");
                    }
                }
            }

            // Last: the checks above name the operation or account at fault, this one only says that something is.
            Assert.True(states.Values.Sum(s => s.Balance) == Accounts * Opening, $"{where}: money is not conserved");
            Assert.True(WriteOrders.OnACycle(states.Values.Select(s => s.Applied)).Length == 0, $"{where}: the accounts' write orders form a cycle");
        }
    }
}
