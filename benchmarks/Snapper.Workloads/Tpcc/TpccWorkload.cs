using System.Globalization;
using Snapper;

namespace Snapper.Workloads.Tpcc;

/// <summary>Parameters of the TPC-C NewOrder workload (thesis §3.4.4.2, Fig. 3.21).</summary>
/// <param name="Warehouses">Warehouses; every one has 10 districts.</param>
/// <param name="OrderPartitions">Order-table actors per district: 2 is the thesis's low skew, 1 its high skew.</param>
/// <param name="Items">Items (TPC-C: 100,000), stocked by every warehouse.</param>
/// <param name="StockPerActor">Stock rows per stock actor (thesis: 10, so 10,000 stock actors per warehouse).</param>
/// <param name="RemotePercent">Percent of order lines supplied by another warehouse (TPC-C: 1).</param>
/// <param name="RollbackPercent">Percent of NewOrders that name an unknown item and roll back (TPC-C: 1).</param>
/// <param name="OrleansTxnLocks">How the <see cref="BenchmarkMode.OrleansTxn"/> baseline's NewOrder takes its actors' locks.</param>
public sealed record TpccSettings(
    int Warehouses = 2,
    int OrderPartitions = 2,
    int Items = 100_000,
    int StockPerActor = 10,
    double RemotePercent = 1,
    double RollbackPercent = 1,
    OrleansTxnLockOrder OrleansTxnLocks = OrleansTxnLocks.Default);

/// <summary>
/// TPC-C NewOrder over partitioned tables: the district actor runs the transaction, reads the warehouse, customer
/// and item actors, updates about ten stock actors and inserts into an order actor, about 15 actors in all.
/// After a run every district's next order id must match the orders stored, and the stock counters must add up
/// to the order lines stored, so a lost or half-applied NewOrder shows.
/// </summary>
public sealed class TpccWorkload : IWorkload
{
    private const int CheckChunk = 100;

    // TPC-C's run-time constants C for NURand (clause 2.1.6); any values in range do.
    private const int CustomerC = 259;
    private const int ItemC = 7_911;

    private readonly TpccSettings _settings;
    private readonly TpccScale _scale;

    public TpccWorkload(TpccSettings settings)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(settings.Warehouses, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(settings.OrderPartitions, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(settings.Items, 15);
        ArgumentOutOfRangeException.ThrowIfLessThan(settings.StockPerActor, 1);
        _settings = settings;
        _scale = new TpccScale(settings.Warehouses, settings.Items, settings.StockPerActor, settings.OrderPartitions);
        Parameters =
        [
            new("warehouses", settings.Warehouses.ToString(CultureInfo.InvariantCulture)),
            new("orderpartitions", settings.OrderPartitions.ToString(CultureInfo.InvariantCulture)),
            new("items", settings.Items.ToString(CultureInfo.InvariantCulture)),
        ];
    }

    public string Name => "tpcc";

    public IReadOnlyList<KeyValuePair<string, string>> Parameters { get; }

    public IReadOnlyList<BenchmarkMode> Modes { get; } = [BenchmarkMode.NT, BenchmarkMode.ACT, BenchmarkMode.PACT, BenchmarkMode.OrleansTxn];

    public IReadOnlyList<KeyValuePair<string, string>> ModeParameters(BenchmarkMode mode) =>
        mode == BenchmarkMode.OrleansTxn ? [OrleansTxnLocks.ParameterOf(_settings.OrleansTxnLocks)] : [];

    /// <summary>Actors a run loads: per warehouse 1 + 1 + 10 x (2 + order partitions) + stock actors.</summary>
    public int ActorCount => TpccLoad.All(_scale).Count();

    public Task PrepareAsync(IGrainFactory grains, BenchmarkMode mode, CancellationToken cancellationToken) =>
        Parallel.ForEachAsync(
            TpccLoad.All(_scale),
            new ParallelOptions { MaxDegreeOfParallelism = 64, CancellationToken = cancellationToken },
            async (load, _) =>
            {
                switch (mode)
                {
                    case BenchmarkMode.NT:
                        await grains.GetGrain<INtTpccActor>(load.Key).Load(load);
                        break;
                    case BenchmarkMode.ACT or BenchmarkMode.PACT:
                        var actor = grains.GetGrain<ISnapperTpccActor>(load.Key);
                        await actor.StartTxn(actor.Load, load);
                        break;
                    case BenchmarkMode.OrleansTxn:
                        await grains.GetGrain<IOrleansTxnTpccActor>(load.Key).Load(load);
                        break;
                    default:
                        throw new NotSupportedException($"TPC-C has no {mode} mode.");
                }
            });

    public ITransactionDriver CreateDriver(IGrainFactory grains, BenchmarkMode mode, int seed, int loops) => mode switch
    {
        BenchmarkMode.NT => new Driver(this, seed, (district, input) => grains.GetGrain<INtTpccActor>(district).NewOrder(input)),
        BenchmarkMode.ACT => new Driver(this, seed, (district, input) =>
        {
            var actor = grains.GetGrain<ISnapperTpccActor>(district);
            return actor.StartTxn(actor.NewOrder, input);
        }),
        BenchmarkMode.PACT => new Driver(this, seed, (district, input) =>
        {
            var actor = grains.GetGrain<ISnapperTpccActor>(district);
            return actor.StartTxn(actor.NewOrder, input, Declare(grains, district, input));
        }),
        BenchmarkMode.OrleansTxn => OrleansTxnLocks.Resolve(_settings.OrleansTxnLocks, loops) == OrleansTxnLockOrder.Ascending
            ? new Driver(this, seed, (district, input) => grains.GetGrain<IOrleansTxnTpccActor>(district).NewOrderInAscendingOrder(input))
            : new Driver(this, seed, (district, input) => grains.GetGrain<IOrleansTxnTpccActor>(district).NewOrder(input)),
        _ => throw new NotSupportedException($"TPC-C has no {mode} mode."),
    };

    public async Task<string?> CheckConsistencyAsync(IGrainFactory grains, BenchmarkMode mode, CancellationToken cancellationToken)
    {
        var keys = TpccLoad.All(_scale)
            .Where(load => load.Table is TpccTable.District or TpccTable.Order or TpccTable.Stock)
            .Select(load => load.Key)
            .ToArray();
        var summaries = new List<TpccSummary>(keys.Length);
        foreach (var chunk in keys.Chunk(CheckChunk))
        {
            cancellationToken.ThrowIfCancellationRequested();
            summaries.AddRange(mode switch
            {
                BenchmarkMode.NT => await Task.WhenAll(chunk.Select(key => grains.GetGrain<INtTpccActor>(key).Summarize())),
                BenchmarkMode.ACT or BenchmarkMode.PACT => await SummarizeInOneTransaction(grains, chunk),
                BenchmarkMode.OrleansTxn => await Task.WhenAll(chunk.Select(key => grains.GetGrain<IOrleansTxnTpccActor>(key).Summarize())),
                _ => throw new NotSupportedException($"TPC-C has no {mode} mode."),
            });
        }

        return Check(summaries);
    }

    /// <summary>TPC-C's consistency conditions 2 and 3 (clause 3.3.2) as they apply to NewOrder, plus stock against order lines.</summary>
    public static string? Check(IReadOnlyCollection<TpccSummary> summaries)
    {
        foreach (var district in summaries.GroupBy(s => (s.Warehouse, s.District)).Where(g => g.Key.District > 0))
        {
            var issued = district.Sum(s => s.OrdersIssued);
            var stored = district.Sum(s => s.OrdersStored);
            var max = district.Max(s => s.MaxOrderId);
            if (issued != stored || issued != max)
            {
                return $"district {district.Key.Warehouse}/{district.Key.District}: next order id says {issued} orders, " +
                    $"{stored} are stored, the highest order id is {max}";
            }
        }

        var (ytd, ordered) = (summaries.Sum(s => s.StockYtd), summaries.Sum(s => s.LineQuantity));
        var (stockOrders, lines) = (summaries.Sum(s => s.StockOrderCount), summaries.Sum(s => s.OrderLines));
        if (ytd != ordered || stockOrders != lines)
        {
            return $"stock shows {ytd} units in {stockOrders} lines, orders hold {ordered} units in {lines} lines";
        }

        return null;
    }

    /// <summary>
    /// A NewOrder's accesses as a PACT: its district, warehouse, customer table and item table, each stock actor
    /// that supplies a line, and the order actor. Which order actor depends on the order id the district hands
    /// out while the transaction runs, so every order actor of the district is declared; the unused ones are
    /// released when the NewOrder returns.
    /// </summary>
    private ActorAccessInfo Declare(IGrainFactory grains, long districtKey, NewOrderInput input)
    {
        var (w, d) = TpccKeys.Decode(districtKey);
        ISnapperTpccActor Actor(long key) => grains.GetGrain<ISnapperTpccActor>(key);
        var info = new ActorAccessInfo()
            .Add(Actor(districtKey))
            .Add(Actor(TpccKeys.Warehouse(w)))
            .Add(Actor(TpccKeys.Customer(w, d)))
            .Add(Actor(TpccKeys.Item(w)));
        foreach (var (stockKey, _) in NewOrderLogic.StockUpdates(_scale, w, input))
        {
            info.Add(Actor(stockKey));
        }

        for (var p = 0; p < _settings.OrderPartitions; p++)
        {
            info.Add(Actor(TpccKeys.Order(w, d, p)));
        }

        return info;
    }

    private static async Task<TpccSummary[]> SummarizeInOneTransaction(IGrainFactory grains, long[] chunk)
    {
        var reader = grains.GetGrain<ISnapperTpccActor>(chunk[0]);
        return await reader.StartTxn(reader.SummarizeMany, chunk);
    }

    /// <summary>A NewOrder as TPC-C's terminal generates it (clause 2.4.1), for a uniformly chosen home district.</summary>
    private (long District, NewOrderInput Input) NextNewOrder(Random random)
    {
        var w = random.Next(1, _settings.Warehouses + 1);
        var d = random.Next(1, TpccScale.DistrictsPerWarehouse + 1);
        var customer = NuRand(random, 1_023, CustomerC, 1, TpccScale.CustomersPerDistrict);
        var lines = new OrderLineInput[random.Next(5, 16)];
        var itemIds = new HashSet<int>();
        for (var i = 0; i < lines.Length; i++)
        {
            int item;
            do
            {
                item = NuRand(random, 8_191, ItemC, 1, _settings.Items);
            }
            while (!itemIds.Add(item));

            var supply = _settings.Warehouses > 1 && random.NextDouble() * 100 < _settings.RemotePercent
                ? OtherWarehouse(random, w)
                : w;
            lines[i] = new OrderLineInput(item, supply, random.Next(1, 11));
        }

        if (random.NextDouble() * 100 < _settings.RollbackPercent)
        {
            lines[^1] = lines[^1] with { ItemId = _settings.Items + 1 };
        }

        return (TpccKeys.District(w, d), new NewOrderInput(customer, lines));
    }

    private int OtherWarehouse(Random random, int home)
    {
        var other = random.Next(1, _settings.Warehouses);
        return other >= home ? other + 1 : other;
    }

    /// <summary>TPC-C's non-uniform random NURand(A, x, y) (clause 2.1.6).</summary>
    private static int NuRand(Random random, int a, int c, int x, int y) =>
        (((random.Next(0, a + 1) | random.Next(x, y + 1)) + c) % (y - x + 1)) + x;

    private sealed class Driver(TpccWorkload workload, int seed, Func<long, NewOrderInput, Task<long>> run) : ITransactionDriver
    {
        private readonly Random _random = new(seed);

        public async Task<RunOutcome> RunOneAsync()
        {
            var (district, input) = workload.NextNewOrder(_random);
            try
            {
                await run(district, input);
                return RunOutcome.Commit;
            }
            catch (Exception exception)
            {
                return AbortClassifier.Classify(exception, typeof(UnknownItemException));
            }
        }
    }
}
