using System.Globalization;
using Snapper;

namespace Snapper.Workloads.SmallBank;

/// <summary>Parameters of the SmallBank MultiTransfer workload (thesis §3.4.1.1, Fig. 3.12).</summary>
/// <param name="Actors">Number of accounts.</param>
/// <param name="TxnSize">Accounts per MultiTransfer: one withdraw and <c>TxnSize - 1</c> deposits in parallel.</param>
/// <param name="Zipf">Zipf constant of account selection (0 = uniform); ignored when <paramref name="HotFraction"/> is set.</param>
/// <param name="HotFraction">If set, a hot set of this fraction of the accounts receives 90% of the accesses.</param>
/// <param name="PactPercent">In <see cref="BenchmarkMode.Hybrid"/>, the percentage of transactions submitted as PACTs.</param>
/// <param name="OrleansTxnLocks">How the <see cref="BenchmarkMode.OrleansTxn"/> baseline's MultiTransfer takes its accounts' locks.</param>
public sealed record SmallBankSettings(
    int Actors = 10_000, int TxnSize = 4, double Zipf = 0, double? HotFraction = null, double PactPercent = 90,
    OrleansTxnLockOrder OrleansTxnLocks = OrleansTxnLocks.Default);

/// <summary>
/// SmallBank MultiTransfer: withdraw from one account and deposit to <c>TxnSize - 1</c> others in parallel.
/// Money only moves between accounts, so the total balance is the invariant checked after a run.
/// </summary>
public sealed class SmallBankWorkload : IWorkload
{
    /// <summary>Starting balance of every account: large enough that no MultiTransfer runs out.</summary>
    public const long InitialBalance = 1_000_000_000;

    private const int CheckChunk = 100;
    private readonly SmallBankSettings _settings;
    private readonly KeySampler _sampler;
    private readonly IKeyChoice? _keyChoice;
    private GrainReferences<INtAccount>? _ntAccounts;
    private GrainReferences<ISnapperAccount>? _snapperAccounts;
    private GrainReferences<IOrleansTxnAccount>? _orleansTxnAccounts;

    /// <param name="settings">The workload's parameters.</param>
    /// <param name="keyChoice">Chooses each MultiTransfer's accounts instead of <paramref name="settings"/>' skew over all of them (a cluster run's distribution over workers); null draws over all.</param>
    public SmallBankWorkload(SmallBankSettings settings, IKeyChoice? keyChoice = null)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(settings.TxnSize, 2);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(settings.TxnSize, settings.Actors);
        _settings = settings;
        _sampler = settings.HotFraction is { } hot ? KeySampler.HotSet(settings.Actors, hot) : KeySampler.Zipf(settings.Actors, settings.Zipf);
        Parameters =
        [
            new("actors", settings.Actors.ToString(CultureInfo.InvariantCulture)),
            new("txnsize", settings.TxnSize.ToString(CultureInfo.InvariantCulture)),
            settings.HotFraction is { } h
                ? new("hot", h.ToString(CultureInfo.InvariantCulture))
                : new("zipf", settings.Zipf.ToString(CultureInfo.InvariantCulture)),
            .. keyChoice?.Parameters ?? [],
        ];
        _keyChoice = keyChoice;
    }

    public string Name => "smallbank";

    public IReadOnlyList<KeyValuePair<string, string>> Parameters { get; }

    public IReadOnlyList<BenchmarkMode> Modes { get; } =
        [BenchmarkMode.NT, BenchmarkMode.ACT, BenchmarkMode.PACT, BenchmarkMode.Hybrid, BenchmarkMode.OrleansTxn];

    public IReadOnlyList<KeyValuePair<string, string>> ModeParameters(BenchmarkMode mode) => mode switch
    {
        BenchmarkMode.Hybrid => [new("pact%", _settings.PactPercent.ToString(CultureInfo.InvariantCulture))],
        BenchmarkMode.OrleansTxn => [OrleansTxnLocks.ParameterOf(_settings.OrleansTxnLocks)],
        _ => [],
    };

    public Task PrepareAsync(IGrainFactory grains, BenchmarkMode mode, CancellationToken cancellationToken) =>
        Parallel.ForEachAsync(
            Enumerable.Range(0, _settings.Actors),
            new ParallelOptions { MaxDegreeOfParallelism = 64, CancellationToken = cancellationToken },
            async (id, _) =>
            {
                switch (mode)
                {
                    case BenchmarkMode.NT:
                        await grains.GetGrain<INtAccount>(id).Init(InitialBalance);
                        break;
                    case BenchmarkMode.ACT or BenchmarkMode.PACT or BenchmarkMode.Hybrid:
                        var account = grains.GetGrain<ISnapperAccount>(id);
                        await account.StartTxn(account.Init, InitialBalance);
                        break;
                    case BenchmarkMode.OrleansTxn:
                        await grains.GetGrain<IOrleansTxnAccount>(id).Init(InitialBalance);
                        break;
                    default:
                        throw new NotSupportedException($"SmallBank has no {mode} mode.");
                }
            });

    public ITransactionDriver CreateDriver(IGrainFactory grains, BenchmarkMode mode, int seed, int loops)
    {
        var keys = _keyChoice?.Bind(grains) ?? _sampler;
        return mode switch
        {
            BenchmarkMode.NT => new Driver(this, keys, seed, input => NtAccounts(grains)[input.From].MultiTransfer(input.Transfer)),
            BenchmarkMode.ACT => new Driver(this, keys, seed, input => Act(SnapperAccounts(grains), input)),
            BenchmarkMode.PACT => new Driver(this, keys, seed, input => Pact(SnapperAccounts(grains), input)),
            BenchmarkMode.Hybrid => new Driver(this, keys, seed, input =>
                input.Draw * 100 < _settings.PactPercent ? Pact(SnapperAccounts(grains), input) : Act(SnapperAccounts(grains), input)),
            BenchmarkMode.OrleansTxn => OrleansTxnLocks.Resolve(_settings.OrleansTxnLocks, loops) == OrleansTxnLockOrder.Ascending
                ? new Driver(this, keys, seed, input => OrleansTxnAccounts(grains)[input.From].MultiTransferInAscendingOrder(input.Transfer))
                : new Driver(this, keys, seed, input => OrleansTxnAccounts(grains)[input.From].MultiTransfer(input.Transfer)),
            _ => throw new NotSupportedException($"SmallBank has no {mode} mode."),
        };
    }

    public async Task<string?> CheckConsistencyAsync(IGrainFactory grains, BenchmarkMode mode, CancellationToken cancellationToken)
    {
        var ids = Enumerable.Range(0, _settings.Actors).Select(i => (long)i).ToArray();
        long total = 0;
        foreach (var chunk in ids.Chunk(CheckChunk))
        {
            cancellationToken.ThrowIfCancellationRequested();
            total += mode switch
            {
                BenchmarkMode.NT => (await Task.WhenAll(chunk.Select(id => grains.GetGrain<INtAccount>(id).Read()))).Sum(),
                BenchmarkMode.ACT or BenchmarkMode.PACT or BenchmarkMode.Hybrid => await SumInOneTransaction(grains, chunk),
                BenchmarkMode.OrleansTxn => (await Task.WhenAll(chunk.Select(id => grains.GetGrain<IOrleansTxnAccount>(id).Read()))).Sum(),
                _ => throw new NotSupportedException($"SmallBank has no {mode} mode."),
            };
        }

        var expected = InitialBalance * _settings.Actors;
        return total == expected ? null : $"total balance {total} differs from {expected}";
    }

    private static async Task<long> SumInOneTransaction(IGrainFactory grains, long[] chunk)
    {
        var reader = grains.GetGrain<ISnapperAccount>(chunk[0]);
        return await reader.StartTxn(reader.SumBalances, chunk);
    }

    private GrainReferences<INtAccount> NtAccounts(IGrainFactory grains) => _ntAccounts is { } cached && cached.Factory == grains ? cached : _ntAccounts = new(grains, _settings.Actors);

    private GrainReferences<ISnapperAccount> SnapperAccounts(IGrainFactory grains) => _snapperAccounts is { } cached && cached.Factory == grains ? cached : _snapperAccounts = new(grains, _settings.Actors);

    private GrainReferences<IOrleansTxnAccount> OrleansTxnAccounts(IGrainFactory grains) => _orleansTxnAccounts is { } cached && cached.Factory == grains ? cached : _orleansTxnAccounts = new(grains, _settings.Actors);

    private static Task Act(GrainReferences<ISnapperAccount> accounts, TransferPlan input)
    {
        var account = accounts[input.From];
        return account.StartTxn(account.MultiTransfer, input.Transfer);
    }

    /// <summary>The same MultiTransfer as a PACT: one access to the withdrawing account and one to each deposit account.</summary>
    private static Task Pact(GrainReferences<ISnapperAccount> accounts, TransferPlan input)
    {
        var account = accounts[input.From];
        var accesses = new ActorAccessInfo(1 + input.Transfer.To.Length).Add(account);
        foreach (var to in input.Transfer.To)
        {
            accesses.Add(accounts[to]);
        }

        return account.StartTxn(account.MultiTransfer, input.Transfer, accesses);
    }

    private TransferPlan NextTransfer(IKeyChooser keys, Random random)
    {
        var picked = keys.NextDistinct(random, _settings.TxnSize);
        var to = new long[picked.Length - 1];
        for (var i = 1; i < picked.Length; i++)
        {
            to[i - 1] = picked[i];
        }

        return new TransferPlan(picked[0], new MultiTransferInput(to, 1), random.NextDouble());
    }

    /// <summary>One MultiTransfer to issue; <paramref name="Draw"/> picks its mode in hybrid runs.</summary>
    private readonly record struct TransferPlan(long From, MultiTransferInput Transfer, double Draw);

    private sealed class Driver(SmallBankWorkload workload, IKeyChooser keys, int seed, Func<TransferPlan, Task> run) : ITransactionDriver
    {
        private readonly Random _random = new(seed);

        public async Task<RunOutcome> RunOneAsync()
        {
            try
            {
                await run(workload.NextTransfer(keys, _random));
                return RunOutcome.Commit;
            }
            catch (Exception exception)
            {
                return AbortClassifier.Classify(exception);
            }
        }
    }
}
