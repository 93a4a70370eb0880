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

public interface IOrleansTxnCart : IGrainWithIntegerKey
{
    [Transaction(TransactionOption.Create)]
    Task AddItem(AddToCart add);

    [Transaction(TransactionOption.Create)]
    Task DeleteItem(int product);

    [Transaction(TransactionOption.Create)]
    Task Checkout(CheckoutRequest request);

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
        var price = known?.Price ?? (await GrainFactory.GetGrain<IOrleansTxnProducts>(add.Seller).AddCarts(new CartLinks([Customer], [add.Product])))[0];
        await cart.PerformUpdate(c => c.Entries[add.Product] = new CartItem(add.Seller, price, (known?.Quantity ?? 0) + add.Quantity));
    }

    public async Task DeleteItem(int product)
    {
        var item = await cart.PerformUpdate(c => c.Entries.Remove(product, out var removed) ? removed : null);
        if (item is not null)
        {
            await GrainFactory.GetGrain<IOrleansTxnProducts>(item.Seller).RemoveCarts(new CartLinks([Customer], [product]));
        }
    }

    public async Task Checkout(CheckoutRequest request)
    {
        var layout = request.Layout;
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

        var bySeller = items.GroupBy(i => i.Value.Seller).ToArray();
        var parts = bySeller.Select(s => new OrderPart(s.Key, s.Sum(i => i.Value.Quantity), s.Sum(i => i.Value.Price * i.Value.Quantity))).ToArray();
        var total = parts.Sum(p => p.Amount);
        var calls = new List<Task>
        {
            Records("order", layout.OrderActorOf(request.Customer)).Add(Customer, total),
            Records("payment", layout.PaymentActorOf(request.Customer)).Add(Customer, total),
            Records("customer", layout.CustomerActorOf(request.Customer)).Add(Customer, total),
        };
        calls.AddRange(bySeller.Select(s => GrainFactory.GetGrain<IOrleansTxnStock>(s.Key).Reserve(new Reservation(s.ToDictionary(i => i.Key, i => i.Value.Quantity)))));
        calls.AddRange(bySeller.Select(s => GrainFactory.GetGrain<IOrleansTxnProducts>(s.Key).RemoveCarts(new CartLinks([Customer], [.. s.Select(i => i.Key)]))));
        calls.AddRange(parts.GroupBy(p => layout.ShipmentActorOf(p.Seller)).Select(shipment => Records("shipment", shipment.Key).Add(Customer, shipment.Sum(p => p.Amount))));
        calls.AddRange(parts.Select(p => GrainFactory.GetGrain<IOrleansTxnSeller>(p.Seller).AddPackage(new Package(request.OrderId, p.Amount))));
        await Task.WhenAll(calls);
    }

    public Task SetPrice(PriceChange change) => cart.PerformUpdate(c =>
    {
        if (c.Entries.TryGetValue(change.Product, out var item))
        {
            c.Entries[change.Product] = item with { Price = change.Price };
        }
    });

    public Task<Dictionary<int, CartItem>> Items() => cart.PerformRead(c => new Dictionary<int, CartItem>(c.Entries));

    private IOrleansTxnRecords Records(string kind, int actor) => GrainFactory.GetGrain<IOrleansTxnRecords>($"{kind}/{actor}");
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

    public async Task UpdatePrice(PriceChange change)
    {
        var carts = await products.PerformUpdate(p =>
        {
            var product = p.Entries[change.Product];
            p.Entries[change.Product] = product with { Price = change.Price };
            return product.Carts ?? [];
        });
        await Task.WhenAll(carts.Select(customer => GrainFactory.GetGrain<IOrleansTxnCart>(customer).SetPrice(change)));
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
