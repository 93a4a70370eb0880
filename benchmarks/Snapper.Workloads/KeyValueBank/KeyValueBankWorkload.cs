using System.Globalization;
using Snapper;

namespace Snapper.Workloads.KeyValueBank;

/// <summary>How a branch keeps its accounts: one opaque state logged whole, or keys logged incrementally.</summary>
public enum BranchStateKind
{
    /// <summary><see cref="OpaqueBranch"/>: Snapper's opaque state, copied and logged whole (the thesis's "Snapper").</summary>
    Opaque,

    /// <summary>A key-value actor, logging only changed keys: <see cref="KeyValueBranch"/> ("Snapper+") or <see cref="KeyLevelBranch"/> ("SnapperX").</summary>
    Kv,
}

/// <summary>Parameters of the key-value SmallBank point (thesis §5.4.2.2).</summary>
/// <param name="Actors">Branch actors (numActor).</param>
/// <param name="ActorSize">Accounts (keys) per branch (actorSize).</param>
/// <param name="TxnSize">Keys a transaction touches on each of its 4 branches (txnSize).</param>
/// <param name="State">Opaque or key-value state.</param>
/// <param name="Concurrency">Key-value state only: actor- or key-level concurrency control.</param>
/// <param name="ActorSkew">The share of branches that are hot: 75% of picks go to them; 1 = uniform.</param>
/// <param name="KeySkew">The share of each branch's accounts that are hot: 75% of picks go to them; 1 = uniform.</param>
public sealed record KeyValueBankSettings(
    int Actors = 1_000,
    int ActorSize = 100,
    int TxnSize = 4,
    BranchStateKind State = BranchStateKind.Kv,
    ConcurrencyLevel Concurrency = ConcurrencyLevel.Actor,
    double ActorSkew = 1,
    double KeySkew = 1);

/// <summary>
/// SmallBank MultiTransfer over branches of accounts (thesis §5.4.2.2, Fig. 5.7): 4 branches per transaction, TxnSize
/// accounts on each; the first withdraws, the other three deposit. Every variant runs the same transactions, so the
/// differences between them are what copying and logging the whole branch costs against only the changed accounts
/// (opaque against kv), and what scheduling per account gains against per branch (kv at actor against key level; its
/// PACTs declare the accounts they touch). Money only moves, so the total is the invariant checked after a run.
/// </summary>
public sealed class KeyValueBankWorkload : IWorkload
{
    public const long InitialBalance = 1_000_000;
    private const int BranchesPerTransaction = 4;
    private readonly KeyValueBankSettings _settings;
    private readonly KeySampler _branches;
    private readonly KeySampler _accounts;

    public KeyValueBankWorkload(KeyValueBankSettings settings)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(settings.Actors, BranchesPerTransaction);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(settings.TxnSize, settings.ActorSize);
        if (settings is { State: BranchStateKind.Opaque, Concurrency: ConcurrencyLevel.Key })
        {
            throw new ArgumentException("Opaque state has actor-level concurrency control only.", nameof(settings));
        }

        _settings = settings;
        _branches = Skewed(settings.Actors, settings.ActorSkew);
        _accounts = Skewed(settings.ActorSize, settings.KeySkew);
        Parameters =
        [
            new("actors", settings.Actors.ToString(CultureInfo.InvariantCulture)),
            new("actorsize", settings.ActorSize.ToString(CultureInfo.InvariantCulture)),
            new("txnsize", settings.TxnSize.ToString(CultureInfo.InvariantCulture)),
            new("actorskew", settings.ActorSkew.ToString(CultureInfo.InvariantCulture)),
            new("keyskew", settings.KeySkew.ToString(CultureInfo.InvariantCulture)),
            new("state", settings.State.ToString().ToLowerInvariant()),
            new("cc", settings.Concurrency.ToString().ToLowerInvariant()),
        ];
    }

    // The thesis's skew: a hot share of the items gets 75% of the picks; 1 is uniform.
    private static KeySampler Skewed(int count, double hotShare) =>
        hotShare >= 1 ? KeySampler.Zipf(count, 0) : KeySampler.HotSet(count, hotShare, hotProbability: 0.75);

    public string Name => "kvbank";

    public IReadOnlyList<KeyValuePair<string, string>> Parameters { get; }

    public IReadOnlyList<BenchmarkMode> Modes { get; } = [BenchmarkMode.ACT, BenchmarkMode.PACT];

    private IBranch Branch(IGrainFactory grains, long id) => _settings switch
    {
        { State: BranchStateKind.Opaque } => grains.GetGrain<IOpaqueBranch>(id),
        { Concurrency: ConcurrencyLevel.Key } => grains.GetGrain<IKeyLevelBranch>(id),
        _ => grains.GetGrain<IKeyValueBranch>(id),
    };

    public Task PrepareAsync(IGrainFactory grains, BenchmarkMode mode, CancellationToken cancellationToken) =>
        Parallel.ForEachAsync(
            Enumerable.Range(0, _settings.Actors),
            new ParallelOptions { MaxDegreeOfParallelism = 32, CancellationToken = cancellationToken },
            async (id, _) =>
            {
                var branch = Branch(grains, id);
                await branch.StartTxn(branch.Init, new BranchInit(_settings.ActorSize, InitialBalance));
            });

    public ITransactionDriver CreateDriver(IGrainFactory grains, BenchmarkMode mode, int seed, int loops) => mode switch
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
            int[] Keys() => workload._accounts.NextDistinct(_random, settings.TxnSize);

            var from = Keys();
            var deposits = branches.Skip(1).Select(b => new BranchDeposit(b, Keys(), 1)).ToArray();
            var transfer = new BranchTransfer(from, deposits, 1);
            var first = workload.Branch(grains, branches[0]);
            try
            {
                await (pact
                    ? first.StartTxn(first.MultiTransfer, transfer, Declare(first, from, deposits))
                    : first.StartTxn(first.MultiTransfer, transfer));
                return RunOutcome.Commit;
            }
            catch (Exception exception)
            {
                return AbortClassifier.Classify(exception);
            }
        }

        // At key level a PACT declares the accounts it touches on each branch; otherwise the branches whole.
        private ActorAccessInfo Declare(IBranch first, int[] from, BranchDeposit[] deposits)
        {
            if (workload._settings.Concurrency != ConcurrencyLevel.Key)
            {
                return ActorAccessInfo.Of([first, .. deposits.Select(d => (IAddressable)workload.Branch(grains, d.Branch))]);
            }

            var info = new ActorAccessInfo().AddKeys(first, from);
            foreach (var deposit in deposits)
            {
                info.AddKeys(workload.Branch(grains, deposit.Branch), deposit.Keys);
            }

            return info;
        }
    }
}
