using Marketplace;
using Orleans.Concurrency;
using Orleans.Transactions.Abstractions;

namespace Snapper.Workloads.Marketplace;

// The marketplace on Microsoft.Orleans.Transactions, the baseline of the marketplace benchmark: the same actors, keys
// and transactions as Marketplace.Actors, with the three relations kept by hand (Orleans has no dependencies) the way
// DependencyStyle.ByHand keeps them on Snapper: a product lists the carts holding it and calls them when its price
// changes, a checkout calls the sellers' views. Orders, payments, customers and shipments only record amounts here:
// the checkout reaches as many actors as Snapper's does, and the check after a run compares what it can.

/// <summary>A key-value state for Orleans Transactions: copied whole by its transactional state on every update.</summary>
[GenerateSerializer]
public sealed class OrleansTxnEntries<TValue>
{
    [Id(0)] public Dictionary<int, TValue> Entries { get; set; } = new();
}

/// <summary>
/// The one order in which the ordered forms of the baseline's transactions (<see cref="OrleansTxnLockOrder.Ascending"/>)
/// take their locks: by kind in this rank order, then by key. A transaction waits only for locks above every lock it
/// holds, so no cycle of waits forms. Products rank below carts because a price change reaches its carts from the
/// product; the cart's own transactions lock the product first (the client knows its cart, and a product's seller
/// follows from its id). Every ordered form only updates, so no read lock waits to become a write lock.
/// </summary>
public static class MarketplaceLockRank
{
    public const int Products = 0;
    public const int Cart = 1;
    public const int Stock = 2;
    public const int Order = 3;
    public const int Payment = 4;
    public const int Customer = 5;
    public const int Shipment = 6;
    public const int Seller = 7;

    /// <summary>A call to the actor <paramref name="actor"/> of kind <paramref name="rank"/>, keyed by its place in the order.</summary>
    public static (long Key, Func<Task> Call) Call(int rank, int actor, Func<Task> call) => (((long)rank << 32) | (uint)actor, call);
}

public interface IOrleansTxnCart : IGrainWithIntegerKey
{
    [Transaction(TransactionOption.Create)]
    Task AddItem(AddToCart add);

    [Transaction(TransactionOption.Create)]
    Task DeleteItem(int product);

    [Transaction(TransactionOption.Create)]
    Task Checkout(CheckoutRequest request);

    /// <summary>AddItem with its locks in <see cref="MarketplaceLockRank"/> order: the product's, then the cart's.</summary>
    [Transaction(TransactionOption.Create)]
    Task AddItemInOrder(AddToCart add);

    /// <summary>DeleteItem with its locks in <see cref="MarketplaceLockRank"/> order: the product's, then the cart's.</summary>
    [Transaction(TransactionOption.Create)]
    Task DeleteItemInOrder(int product, int seller);

    /// <summary>
    /// Checkout with its locks in <see cref="MarketplaceLockRank"/> order. <paramref name="products"/> is what the cart
    /// holds, known to the client, so that the products are left before the cart is locked; a cart holding anything else
    /// fails the checkout.
    /// </summary>
    [Transaction(TransactionOption.Create)]
    Task CheckoutInOrder(CheckoutRequest request, int[] products);

    [Transaction(TransactionOption.Join)]
    Task SetPrice(PriceChange change);

    [Transaction(TransactionOption.CreateOrJoin)]
    Task<Dictionary<int, CartItem>> Items();
}

public interface IOrleansTxnProducts : IGrainWithIntegerKey
{
    [Transaction(TransactionOption.Create)]
    Task AddProducts(Dictionary<int, Product> products);

    [Transaction(TransactionOption.Create)]
    Task UpdatePrice(PriceChange change);

    /// <summary>UpdatePrice with its locks in <see cref="MarketplaceLockRank"/> order: the product's, then its carts' in ascending order.</summary>
    [Transaction(TransactionOption.Create)]
    Task UpdatePriceInOrder(PriceChange change);

    [Transaction(TransactionOption.Join)]
    Task<decimal[]> AddCarts(CartLinks links);

    [Transaction(TransactionOption.Join)]
    Task RemoveCarts(CartLinks links);

    [Transaction(TransactionOption.CreateOrJoin)]
    Task<Dictionary<int, Product>> All();
}

public interface IOrleansTxnStock : IGrainWithIntegerKey
{
    [Transaction(TransactionOption.Create)]
    Task AddStock(Dictionary<int, int> quantities);

    [Transaction(TransactionOption.Join)]
    Task Reserve(Reservation reservation);
}

/// <summary>Orders, payments, customers or shipments ("order/3", ...): an amount per key, and their total.</summary>
public interface IOrleansTxnRecords : IGrainWithStringKey
{
    [Transaction(TransactionOption.Join)]
    Task Add(int key, decimal amount);

    [Transaction(TransactionOption.CreateOrJoin)]
    Task<decimal> Total();
}

public interface IOrleansTxnSeller : IGrainWithIntegerKey
{
    [Transaction(TransactionOption.Join)]
    Task AddPackage(Package package);

    [Transaction(TransactionOption.CreateOrJoin)]
    Task<SellerView> View();
}

[Reentrant]
public sealed class OrleansTxnCart(
    [TransactionalState("cart", OrleansTxnStorage.Name)] ITransactionalState<OrleansTxnEntries<CartItem>> cart) : Grain, IOrleansTxnCart
{
    private int Customer => (int)this.GetPrimaryKeyLong();

    public async Task AddItem(AddToCart add)
    {
        var known = await cart.PerformRead(c => c.Entries.GetValueOrDefault(add.Product));
        var price = known?.Price ?? (await Products(add.Seller).AddCarts(new CartLinks([Customer], [add.Product])))[0];
        await cart.PerformUpdate(c => c.Entries[add.Product] = new CartItem(add.Seller, price, (known?.Quantity ?? 0) + add.Quantity));
    }

    public async Task DeleteItem(int product)
    {
        var item = await cart.PerformUpdate(c => c.Entries.Remove(product, out var removed) ? removed : null);
        if (item is not null)
        {
            await Products(item.Seller).RemoveCarts(new CartLinks([Customer], [product]));
        }
    }

    public async Task AddItemInOrder(AddToCart add)
    {
        // The product first, so its price comes with its lock; the cart is then updated without a read before it (a
        // read lock upgraded to a write is one more wait).
        var price = (await Products(add.Seller).AddCarts(new CartLinks([Customer], [add.Product])))[0];
        await cart.PerformUpdate(c => c.Entries[add.Product] = new CartItem(add.Seller, price, (c.Entries.GetValueOrDefault(add.Product)?.Quantity ?? 0) + add.Quantity));
    }

    public async Task DeleteItemInOrder(int product, int seller)
    {
        await Products(seller).RemoveCarts(new CartLinks([Customer], [product]));
        await cart.PerformUpdate(c => c.Entries.Remove(product));
    }

    public Task Checkout(CheckoutRequest request) => Checkout(request, OrleansTxnLockOrder.Parallel, declared: null);

    public Task CheckoutInOrder(CheckoutRequest request, int[] products) => Checkout(request, OrleansTxnLockOrder.Ascending, products);

    private async Task Checkout(CheckoutRequest request, OrleansTxnLockOrder locks, int[]? declared)
    {
        var layout = request.Layout;
        if (declared is not null)
        {
            // Products rank below carts: leave them before the cart is locked.
            await OrleansTxnLocks.CallAsync(locks, declared.GroupBy(layout.SellerOf).Select(sold =>
                MarketplaceLockRank.Call(MarketplaceLockRank.Products, sold.Key, () => Products(sold.Key).RemoveCarts(new CartLinks([Customer], [.. sold])))));
        }

        var items = await cart.PerformUpdate(c =>
        {
            var all = c.Entries.ToArray();
            c.Entries.Clear();
            return all;
        });
        if (items.Length == 0)
        {
            throw new InvalidOperationException($"the cart of customer {request.Customer} is empty");
        }

        if (declared is not null && !items.Select(i => i.Key).ToHashSet().SetEquals(declared))
        {
            throw new InvalidOperationException(
                $"the cart of customer {request.Customer} holds [{string.Join(", ", items.Select(i => i.Key))}], the checkout declared [{string.Join(", ", declared)}]");
        }

        var bySeller = items.GroupBy(i => i.Value.Seller).ToArray();
        var parts = bySeller.Select(s => new OrderPart(s.Key, s.Sum(i => i.Value.Quantity), s.Sum(i => i.Value.Price * i.Value.Quantity))).ToArray();
        var total = parts.Sum(p => p.Amount);
        var calls = new List<(long Key, Func<Task> Call)>
        {
            Record(MarketplaceLockRank.Order, "order", layout.OrderActorOf(request.Customer), total),
            Record(MarketplaceLockRank.Payment, "payment", layout.PaymentActorOf(request.Customer), total),
            Record(MarketplaceLockRank.Customer, "customer", layout.CustomerActorOf(request.Customer), total),
        };
        calls.AddRange(bySeller.Select(s => MarketplaceLockRank.Call(MarketplaceLockRank.Stock, s.Key,
            () => GrainFactory.GetGrain<IOrleansTxnStock>(s.Key).Reserve(new Reservation(s.ToDictionary(i => i.Key, i => i.Value.Quantity))))));
        if (declared is null)
        {
            calls.AddRange(bySeller.Select(s => MarketplaceLockRank.Call(MarketplaceLockRank.Products, s.Key,
                () => Products(s.Key).RemoveCarts(new CartLinks([Customer], [.. s.Select(i => i.Key)])))));
        }

        calls.AddRange(parts.GroupBy(p => layout.ShipmentActorOf(p.Seller)).Select(shipment =>
            Record(MarketplaceLockRank.Shipment, "shipment", shipment.Key, shipment.Sum(p => p.Amount))));
        calls.AddRange(parts.Select(p => MarketplaceLockRank.Call(MarketplaceLockRank.Seller, p.Seller,
            () => GrainFactory.GetGrain<IOrleansTxnSeller>(p.Seller).AddPackage(new Package(request.OrderId, p.Amount)))));
        await OrleansTxnLocks.CallAsync(locks, calls);
    }

    public Task SetPrice(PriceChange change) => cart.PerformUpdate(c =>
    {
        if (c.Entries.TryGetValue(change.Product, out var item))
        {
            c.Entries[change.Product] = item with { Price = change.Price };
        }
    });

    public Task<Dictionary<int, CartItem>> Items() => cart.PerformRead(c => new Dictionary<int, CartItem>(c.Entries));

    /// <summary>Adds <paramref name="amount"/> to the record actor <paramref name="actor"/> of <paramref name="kind"/> ("order/3", ...).</summary>
    private (long Key, Func<Task> Call) Record(int rank, string kind, int actor, decimal amount) => MarketplaceLockRank.Call(rank, actor,
        () => GrainFactory.GetGrain<IOrleansTxnRecords>($"{kind}/{actor}").Add(Customer, amount));

    private IOrleansTxnProducts Products(int seller) => GrainFactory.GetGrain<IOrleansTxnProducts>(seller);
}

[Reentrant]
public sealed class OrleansTxnProducts(
    [TransactionalState("products", OrleansTxnStorage.Name)] ITransactionalState<OrleansTxnEntries<Product>> products) : Grain, IOrleansTxnProducts
{
    public Task AddProducts(Dictionary<int, Product> added) => products.PerformUpdate(p =>
    {
        foreach (var (id, product) in added)
        {
            p.Entries[id] = product;
        }
    });

    public Task UpdatePrice(PriceChange change) => UpdatePrice(change, OrleansTxnLockOrder.Parallel);

    public Task UpdatePriceInOrder(PriceChange change) => UpdatePrice(change, OrleansTxnLockOrder.Ascending);

    private async Task UpdatePrice(PriceChange change, OrleansTxnLockOrder locks)
    {
        var carts = await products.PerformUpdate(p =>
        {
            var product = p.Entries[change.Product];
            p.Entries[change.Product] = product with { Price = change.Price };
            return product.Carts ?? [];
        });
        await OrleansTxnLocks.CallAsync(locks, carts.Select(customer =>
            MarketplaceLockRank.Call(MarketplaceLockRank.Cart, customer, () => GrainFactory.GetGrain<IOrleansTxnCart>(customer).SetPrice(change))));
    }

    public Task<decimal[]> AddCarts(CartLinks links) => products.PerformUpdate(p => links.Products.Select(id =>
    {
        var product = p.Entries[id];
        p.Entries[id] = product with { Carts = [.. (product.Carts ?? []).Union(links.Customers)] };
        return product.Price;
    }).ToArray());

    public Task RemoveCarts(CartLinks links) => products.PerformUpdate(p =>
    {
        foreach (var id in links.Products)
        {
            if (p.Entries.TryGetValue(id, out var product))
            {
                p.Entries[id] = product with { Carts = [.. (product.Carts ?? []).Except(links.Customers)] };
            }
        }
    });

    public Task<Dictionary<int, Product>> All() => products.PerformRead(p => new Dictionary<int, Product>(p.Entries));
}

[Reentrant]
public sealed class OrleansTxnStock(
    [TransactionalState("stock", OrleansTxnStorage.Name)] ITransactionalState<OrleansTxnEntries<StockItem>> stock) : Grain, IOrleansTxnStock
{
    public Task AddStock(Dictionary<int, int> quantities) => stock.PerformUpdate(s =>
    {
        foreach (var (product, quantity) in quantities)
        {
            s.Entries[product] = new StockItem(quantity);
        }
    });

    public Task Reserve(Reservation reservation) => stock.PerformUpdate(s =>
    {
        foreach (var (product, quantity) in reservation.Quantities)
        {
            var left = (s.Entries.TryGetValue(product, out var item) ? item.Quantity : 0) - quantity;
            if (left < 0)
            {
                throw new OutOfStockException($"product {product} has {left + quantity} in stock, {quantity} asked");
            }

            s.Entries[product] = new StockItem(left);
        }
    });
}

[Reentrant]
public sealed class OrleansTxnRecords(
    [TransactionalState("records", OrleansTxnStorage.Name)] ITransactionalState<OrleansTxnEntries<decimal>> records) : Grain, IOrleansTxnRecords
{
    public Task Add(int key, decimal amount) => records.PerformUpdate(r => r.Entries[key] = r.Entries.GetValueOrDefault(key) + amount);

    public Task<decimal> Total() => records.PerformRead(r => r.Entries.Values.Sum());
}

[Reentrant]
public sealed class OrleansTxnSeller(
    [TransactionalState("view", OrleansTxnStorage.Name)] ITransactionalState<OrleansTxnEntries<SellerView>> view) : Grain, IOrleansTxnSeller
{
    private int Seller => (int)this.GetPrimaryKeyLong();

    public Task AddPackage(Package package) => view.PerformUpdate(v =>
        v.Entries[Seller] = new AddPackageToView().Apply(Seller, Package.None, package, Seller, v.Entries.GetValueOrDefault(Seller) ?? SellerView.Empty));

    public Task<SellerView> View() => view.PerformRead(v => v.Entries.GetValueOrDefault(Seller) ?? SellerView.Empty);
}
