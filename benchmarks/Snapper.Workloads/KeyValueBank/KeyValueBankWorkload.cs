using System.Globalization;
using Snapper;

namespace Snapper.Workloads.KeyValueBank;

/// <summary>How a branch keeps its accounts: one opaque state logged whole, or keys logged incrementally.</summary>
public enum BranchStateKind
{
    /// <summary><see cref="SnapshotBranch"/>: Snapper's opaque state, copied and logged whole (the thesis's "Snapper").</summary>
    Snapshot,

    /// <summary><see cref="IncrementalBranch"/>: a key-value actor, logging only changed keys (the thesis's "Snapper+").</summary>
    Incremental,
}

/// <summary>Parameters of the key-value SmallBank point (thesis §5.4.2.1).</summary>
/// <param name="Actors">Branch actors (numActor).</param>
/// <param name="ActorSize">Accounts (keys) per branch.</param>
/// <param name="TxnSize">Keys a transaction touches on each of its 4 branches.</param>
/// <param name="State">Snapshot or incremental state.</param>
/// <param name="HotFraction">The share of branches that are hot (actorSkew): 75% of picks go to them; 1 = uniform.</param>
public sealed record KeyValueBankSettings(int Actors = 1_000, int ActorSize = 100, int TxnSize = 4, BranchStateKind State = BranchStateKind.Incremental, double HotFraction = 1);

/// <summary>
/// SmallBank MultiTransfer over branches of accounts (thesis §5.4.2.1, Fig. 5.7): 4 branches per transaction, TxnSize
/// accounts on each; the first withdraws, the other three deposit. Both state kinds run the same transactions, so the
/// difference between them is what copying and logging the whole branch costs against only the changed accounts.
/// Money only moves, so the total is the invariant checked after a run.
/// </summary>
public sealed class KeyValueBankWorkload : IWorkload
{
    public const long InitialBalance = 1_000_000;
    private const int BranchesPerTransaction = 4;
    private readonly KeyValueBankSettings _settings;
    private readonly KeySampler _branches;

    public KeyValueBankWorkload(KeyValueBankSettings settings)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(settings.Actors, BranchesPerTransaction);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(settings.TxnSize, settings.ActorSize);
        _settings = settings;
        _branches = settings.HotFraction >= 1 ? KeySampler.Zipf(settings.Actors, 0) : KeySampler.HotSet(settings.Actors, settings.HotFraction, hotProbability: 0.75);
        Parameters =
        [
            new("actors", settings.Actors.ToString(CultureInfo.InvariantCulture)),
            new("actorsize", settings.ActorSize.ToString(CultureInfo.InvariantCulture)),
            new("txnsize", settings.TxnSize.ToString(CultureInfo.InvariantCulture)),
            new("hot", settings.HotFraction.ToString(CultureInfo.InvariantCulture)),
            new("state", settings.State.ToString().ToLowerInvariant()),
        ];
    }

    public string Name => "kvbank";

    public IReadOnlyList<KeyValuePair<string, string>> Parameters { get; }

    public IReadOnlyList<BenchmarkMode> Modes { get; } = [BenchmarkMode.ACT, BenchmarkMode.PACT];

    private IBranch Branch(IGrainFactory grains, long id) => _settings.State == BranchStateKind.Snapshot
        ? grains.GetGrain<ISnapshotBranch>(id)
        : grains.GetGrain<IIncrementalBranch>(id);

    public Task PrepareAsync(IGrainFactory grains, BenchmarkMode mode, CancellationToken cancellationToken) =>
        Parallel.ForEachAsync(
            Enumerable.Range(0, _settings.Actors),
            new ParallelOptions { MaxDegreeOfParallelism = 32, CancellationToken = cancellationToken },
            async (id, _) =>
            {
                var branch = Branch(grains, id);
                await branch.StartTxn(branch.Init, new BranchInit(_settings.ActorSize, InitialBalance));
            });

    public ITransactionDriver CreateDriver(IGrainFactory grains, BenchmarkMode mode, int seed) => mode switch
    {
        BenchmarkMode.ACT or BenchmarkMode.PACT => new Driver(this, grains, mode == BenchmarkMode.PACT, seed),
        _ => throw new NotSupportedException($"kvbank has no {mode} mode."),
    };

    public async Task<string?> CheckConsistencyAsync(IGrainFactory grains, BenchmarkMode mode, CancellationToken cancellationToken)
    {
        var total = 0L;
        foreach (var id in Enumerable.Range(0, _settings.Actors))
        {
            cancellationToken.ThrowIfCancellationRequested();
            var branch = Branch(grains, id);
            total += await branch.StartTxn(branch.Sum, 0);
        }

        var expected = InitialBalance * _settings.ActorSize * _settings.Actors;
        return total == expected ? null : $"total balance {total} differs from {expected}";
    }

    private sealed class Driver(KeyValueBankWorkload workload, IGrainFactory grains, bool pact, int seed) : ITransactionDriver
    {
        private readonly Random _random = new(seed);

        public async Task<RunOutcome> RunOneAsync()
        {
            var settings = workload._settings;
            var branches = workload._branches.NextDistinct(_random, BranchesPerTransaction);
            int[] Keys()
            {
                var keys = new HashSet<int>();
                while (keys.Count < settings.TxnSize)
                {
                    keys.Add(_random.Next(settings.ActorSize));
                }

                return [.. keys];
            }

            var transfer = new BranchTransfer(Keys(), [.. branches.Skip(1).Select(b => new BranchDeposit(b, Keys(), 1))], 1);
            var first = workload.Branch(grains, branches[0]);
            try
            {
                await (pact
                    ? first.StartTxn(first.MultiTransfer, transfer, ActorAccessInfo.Of([.. branches.Select(b => (IAddressable)workload.Branch(grains, b))]))
                    : first.StartTxn(first.MultiTransfer, transfer));
                return RunOutcome.Commit;
            }
            catch (Exception exception)
            {
                return AbortClassifier.Classify(exception);
            }
        }
    }
}
