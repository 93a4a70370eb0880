using System.Globalization;
using Marketplace;
using Snapper;

namespace Snapper.Workloads.Marketplace;

/// <summary>Parameters of the Online Marketplace point (thesis §5.4.6).</summary>
/// <param name="Sellers">Sellers, each with a product actor, a stock actor and a seller actor.</param>
/// <param name="ProductsPerSeller">Products (keys) per seller.</param>
/// <param name="Customers">Customers, each with a cart actor.</param>
/// <param name="ActorSkew">The share of sellers that are hot: 75% of product picks go to them (1 = uniform).</param>
/// <param name="KeySkew">The share of a seller's products that are hot: 75% of its picks go to them (1 = uniform).</param>
/// <param name="OrleansTxnLocks">How the <see cref="BenchmarkMode.OrleansTxn"/> baseline's transactions take their actors' locks.</param>
public sealed record MarketplaceSettings(
    int Sellers = 20, int ProductsPerSeller = 100, int Customers = 2_000, double ActorSkew = 1, double KeySkew = 1,
    OrleansTxnLockOrder OrleansTxnLocks = OrleansTxnLocks.Default);

/// <summary>
/// The Online Marketplace mix: AddItemToCart, DeleteItemInCart and UpdatePrice as ACTs, Checkout of 1-5 items as a PACT
/// in <see cref="BenchmarkMode.Hybrid"/> (the thesis's mix) or as an ACT in <see cref="BenchmarkMode.ACT"/>; in
/// <see cref="BenchmarkMode.OrleansTxn"/> the same mix on Orleans Transactions (<see cref="OrleansTxnCart"/>; with more than one
/// in flight each transaction takes its locks in <see cref="MarketplaceLockRank"/> order by default, see <see cref="OrleansTxnLockOrder"/>). A client
/// loop works on one customer at a time and knows its cart, so a checkout declares exactly what it reaches. Checked
/// after a run: every cart price equals its product's, no stock without its product, each seller's view equals a
/// recomputation from the orders.
/// </summary>
public sealed class MarketplaceWorkload : IWorkload
{
    private const int StockPerProduct = 1_000_000_000;
    private readonly MarketplaceSettings _settings;
    private readonly KeySampler _sellers;
    private readonly KeySampler _products;
    // Shared by every point and mode of the process: the silo keeps one marketplace (its sellers set up once per silo,
    // its orders and views accumulating), so order ids and customers (carts) must not repeat from one point to the next.
    private static readonly System.Runtime.CompilerServices.ConditionalWeakTable<IGrainFactory, object> SetUpSilos = new();
    private static readonly System.Runtime.CompilerServices.ConditionalWeakTable<IGrainFactory, object> SetUpOrleansTxnSilos = new();
    private static long s_nextOrder;
    private static int s_nextCustomer;
    private MarketplaceLayout _layout;
    private Customer[] _customers = [];

    public MarketplaceWorkload(MarketplaceSettings settings)
    {
        _settings = settings;
        _sellers = Sampler(settings.Sellers, settings.ActorSkew);
        _products = Sampler(settings.ProductsPerSeller, settings.KeySkew);
        _layout = new MarketplaceLayout(settings.Sellers, settings.ProductsPerSeller, settings.Customers, OrderActors: 8, PaymentActors: 8, CustomerActors: 8, ShipmentActors: 4);
        Parameters =
        [
            new("sellers", settings.Sellers.ToString(CultureInfo.InvariantCulture)),
            new("products", settings.ProductsPerSeller.ToString(CultureInfo.InvariantCulture)),
            new("customers", settings.Customers.ToString(CultureInfo.InvariantCulture)),
            new("actorskew", settings.ActorSkew.ToString(CultureInfo.InvariantCulture)),
            new("keyskew", settings.KeySkew.ToString(CultureInfo.InvariantCulture)),
        ];
    }

    private static KeySampler Sampler(int n, double hot) => hot >= 1 ? KeySampler.Zipf(n, 0) : KeySampler.HotSet(n, hot, hotProbability: 0.75);

    public string Name => "marketplace";

    public IReadOnlyList<KeyValuePair<string, string>> Parameters { get; }

    public IReadOnlyList<BenchmarkMode> Modes { get; } = [BenchmarkMode.ACT, BenchmarkMode.Hybrid, BenchmarkMode.OrleansTxn];

    public IReadOnlyList<KeyValuePair<string, string>> ModeParameters(BenchmarkMode mode) =>
        mode == BenchmarkMode.OrleansTxn ? [OrleansTxnLocks.ParameterOf(_settings.OrleansTxnLocks)] : [];

    /// <summary>
    /// Sets up the sellers once per silo; every point and mode gets carts of its own (customers no earlier one used), so
    /// that what a client loop knows of a cart is exactly what is in it. Products, stock, orders and views are shared.
    /// </summary>
    public async Task PrepareAsync(IGrainFactory grains, BenchmarkMode mode, CancellationToken cancellationToken)
    {
        if (mode != BenchmarkMode.OrleansTxn && !SetUpSilos.TryGetValue(grains, out _))
        {
            await new MarketplaceClient(grains, _layout).SetUpAsync(Price, StockPerProduct);
            SetUpSilos.AddOrUpdate(grains, new object());
        }

        if (mode == BenchmarkMode.OrleansTxn && !SetUpOrleansTxnSilos.TryGetValue(grains, out _))
        {
            for (var seller = 0; seller < _layout.Sellers; seller++)
            {
                var id = seller;
                await grains.GetGrain<IOrleansTxnProducts>(seller).AddProducts(_layout.ProductsOf(seller).ToDictionary(p => p, p => new Product(id, Price(p))));
                await grains.GetGrain<IOrleansTxnStock>(seller).AddStock(_layout.ProductsOf(seller).ToDictionary(p => p, _ => StockPerProduct));
            }

            SetUpOrleansTxnSilos.AddOrUpdate(grains, new object());
        }

        _layout = _layout with { FirstCustomer = Interlocked.Add(ref s_nextCustomer, _settings.Customers) - _settings.Customers };
        _customers = [.. _layout.CustomerIds.Select(id => new Customer(id))];
    }

    private static decimal Price(int product) => 1m + product % 100;

    public ITransactionDriver CreateDriver(IGrainFactory grains, BenchmarkMode mode, int seed, int loops) => mode switch
    {
        BenchmarkMode.ACT or BenchmarkMode.Hybrid => new Driver(this, new SnapperMarket(new MarketplaceClient(grains, _layout), PactCheckout: mode == BenchmarkMode.Hybrid), seed),
        BenchmarkMode.OrleansTxn => new Driver(this, new OrleansTxnMarket(grains, _layout, OrleansTxnLocks.Resolve(_settings.OrleansTxnLocks, loops)), seed),
        _ => throw new NotSupportedException($"marketplace has no {mode} mode."),
    };

    public async Task<string?> CheckConsistencyAsync(IGrainFactory grains, BenchmarkMode mode, CancellationToken cancellationToken)
    {
        var problems = mode == BenchmarkMode.OrleansTxn
            ? await OrleansTxnMarket.CheckInvariantsAsync(grains, _layout)
            : await new MarketplaceClient(grains, _layout).CheckInvariantsAsync();
        return problems.Count == 0 ? null : $"{problems.Count} problem(s), first: {problems[0]}";
    }

    /// <summary>The mix's four transactions, on Snapper or on Orleans Transactions.</summary>
    private interface IMarket
    {
        Task AddItemToCart(int customer, int product);

        Task DeleteItemInCart(int customer, int product);

        Task UpdatePrice(int product, decimal price);

        Task Checkout(int customer, long orderId, IReadOnlyCollection<int> products);
    }

    private sealed record SnapperMarket(MarketplaceClient Client, bool PactCheckout) : IMarket
    {
        public Task AddItemToCart(int customer, int product) => Client.AddItemToCart(customer, product, 1);

        public Task DeleteItemInCart(int customer, int product) => Client.DeleteItemInCart(customer, product);

        public Task UpdatePrice(int product, decimal price) => Client.UpdatePrice(product, price);

        public Task Checkout(int customer, long orderId, IReadOnlyCollection<int> products) => Client.Checkout(customer, orderId, products, PactCheckout);
    }

    private sealed record OrleansTxnMarket(IGrainFactory Grains, MarketplaceLayout Layout, OrleansTxnLockOrder Locks) : IMarket
    {
        private bool InOrder => Locks == OrleansTxnLockOrder.Ascending;

        public Task AddItemToCart(int customer, int product)
        {
            var add = new AddToCart(product, Layout.SellerOf(product), 1);
            return InOrder ? Cart(customer).AddItemInOrder(add) : Cart(customer).AddItem(add);
        }

        public Task DeleteItemInCart(int customer, int product) =>
            InOrder ? Cart(customer).DeleteItemInOrder(product, Layout.SellerOf(product)) : Cart(customer).DeleteItem(product);

        public Task UpdatePrice(int product, decimal price)
        {
            var (products, change) = (Grains.GetGrain<IOrleansTxnProducts>(Layout.SellerOf(product)), new PriceChange(product, price));
            return InOrder ? products.UpdatePriceInOrder(change) : products.UpdatePrice(change);
        }

        public Task Checkout(int customer, long orderId, IReadOnlyCollection<int> products)
        {
            var request = new CheckoutRequest(customer, orderId, Layout);
            return InOrder ? Cart(customer).CheckoutInOrder(request, [.. products]) : Cart(customer).Checkout(request);
        }

        private IOrleansTxnCart Cart(int customer) => Grains.GetGrain<IOrleansTxnCart>(customer);

        /// <summary>Every cart item's price equals its product's; the sellers' views add up to the orders recorded.</summary>
        public static async Task<List<string>> CheckInvariantsAsync(IGrainFactory grains, MarketplaceLayout layout)
        {
            var problems = new List<string>();
            var products = new Dictionary<int, Product>();
            var views = 0m;
            for (var seller = 0; seller < layout.Sellers; seller++)
            {
                foreach (var (id, product) in await grains.GetGrain<IOrleansTxnProducts>(seller).All())
                {
                    products[id] = product;
                }

                views += (await grains.GetGrain<IOrleansTxnSeller>(seller).View()).Total;
            }

            foreach (var customer in layout.CustomerIds)
            {
                foreach (var (id, item) in await grains.GetGrain<IOrleansTxnCart>(customer).Items())
                {
                    if (products[id].Price != item.Price)
                    {
                        problems.Add($"customer {customer}'s cart has product {id} at {item.Price}, the product costs {products[id].Price}");
                    }
                }
            }

            var orders = 0m;
            for (var actor = 0; actor < layout.OrderActors; actor++)
            {
                orders += await grains.GetGrain<IOrleansTxnRecords>($"order/{actor}").Total();
            }

            if (orders != views)
            {
                problems.Add($"the sellers' views add up to {views}, the orders to {orders}");
            }

            return problems;
        }
    }

    private int NextProduct(Random random) => _sellers.NextDistinct(random, 1)[0] * _settings.ProductsPerSeller + _products.NextDistinct(random, 1)[0];

    /// <summary>A customer and what its cart holds; a client loop that takes it owns it until it lets go.</summary>
    private sealed class Customer(int id)
    {
        private int _taken;

        public int Id => id;

        public HashSet<int> Cart { get; } = [];

        public bool TryTake() => Interlocked.Exchange(ref _taken, 1) == 0;

        public void Release() => Volatile.Write(ref _taken, 0);
    }

    private sealed class Driver(MarketplaceWorkload workload, IMarket market, int seed) : ITransactionDriver
    {
        private readonly Random _random = new(seed);

        public async Task<RunOutcome> RunOneAsync()
        {
            var customer = await TakeAsync();
            try
            {
                var cart = customer.Cart;
                var draw = _random.NextDouble();
                if (cart.Count > 0 && (draw < 0.3 || cart.Count >= 5))
                {
                    await market.Checkout(customer.Id, Interlocked.Increment(ref s_nextOrder), cart);
                    cart.Clear();
                }
                else if (draw < 0.45)
                {
                    await market.UpdatePrice(workload.NextProduct(_random), _random.Next(1, 100));
                }
                else if (cart.Count > 0 && draw < 0.55)
                {
                    var item = cart.ElementAt(_random.Next(cart.Count));
                    await market.DeleteItemInCart(customer.Id, item);
                    cart.Remove(item);
                }
                else
                {
                    var product = workload.NextProduct(_random);
                    await market.AddItemToCart(customer.Id, product);
                    cart.Add(product);
                }

                return RunOutcome.Commit;
            }
            catch (Exception exception)
            {
                return AbortClassifier.Classify(exception);
            }
            finally
            {
                customer.Release();
            }
        }

        /// <summary>A customer no other loop works on (waiting a moment when, with more loops than customers, all are taken).</summary>
        private async Task<Customer> TakeAsync()
        {
            for (var attempt = 1; ; attempt++)
            {
                var customer = workload._customers[_random.Next(workload._customers.Length)];
                if (customer.TryTake())
                {
                    return customer;
                }

                if (attempt % 8 == 0)
                {
                    await Task.Delay(1);
                }
            }
        }
    }
}
