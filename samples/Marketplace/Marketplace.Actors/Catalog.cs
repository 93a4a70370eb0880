using Snapper;

namespace Marketplace;

/// <summary>A seller's products (product id to <see cref="Product"/>): the leader of carts' prices and of stock.</summary>
public interface IProductActor : ITransactionalActor, IGrainWithIntegerKey
{
    Task AddProducts(TxnContext ctx, Dictionary<int, Product> products);

    /// <summary>UpdatePrice (an ACT): every cart holding the product follows, in the same transaction.</summary>
    Task UpdatePrice(TxnContext ctx, PriceChange change);

    /// <summary>Deletes a product: its stock item goes with it, carts stop following it.</summary>
    Task<bool> DeleteProduct(TxnContext ctx, int product);

    /// <summary>By hand: the carts start following the products; returns their prices (in the order given).</summary>
    Task<decimal[]> AddCarts(TxnContext ctx, CartLinks links);

    /// <summary>By hand: the carts stop following the products (products no longer there are skipped).</summary>
    Task RemoveCarts(TxnContext ctx, CartLinks links);

    Task<Dictionary<int, Product>> All(TxnContext ctx, int unused);
}

public sealed class ProductActor : MarketplaceActor<int, Product>, IProductActor
{
    public async Task AddProducts(TxnContext ctx, Dictionary<int, Product> products)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite, [.. products.Keys]);
        foreach (var (id, product) in products)
        {
            state.Put(id, product);
        }
    }

    public async Task UpdatePrice(TxnContext ctx, PriceChange change)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite, change.Product);
        var product = state.Get(change.Product);
        state.Put(change.Product, product with { Price = change.Price });
        if (ByHand)
        {
            await Task.WhenAll((product.Carts ?? []).Select(customer => CallActor(ctx, GrainFactory.GetGrain<ICartActor>(customer).SetPrice, change)));
        }
    }

    public async Task<bool> DeleteProduct(TxnContext ctx, int product)
    {
        var deleted = (await GetState(ctx, AccessMode.ReadWrite, product)).Delete(product);
        if (deleted && ByHand)
        {
            await CallActor(ctx, GrainFactory.GetGrain<IStockActor>(this.GetPrimaryKeyLong()).Remove, product);
        }

        return deleted;
    }

    public async Task<decimal[]> AddCarts(TxnContext ctx, CartLinks links)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite, links.Products);
        return [.. links.Products.Select(id =>
        {
            var product = state.Get(id);
            state.Put(id, product with { Carts = [.. (product.Carts ?? []).Union(links.Customers)] });
            return product.Price;
        })];
    }

    public async Task RemoveCarts(TxnContext ctx, CartLinks links)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite, links.Products);
        foreach (var id in links.Products)
        {
            if (state.TryGet(id, out var product))
            {
                state.Put(id, product with { Carts = [.. (product.Carts ?? []).Except(links.Customers)] });
            }
        }
    }

    public async Task<Dictionary<int, Product>> All(TxnContext ctx, int unused) => new((await GetState(ctx, AccessMode.Read)).Entries);
}

/// <summary>A seller's stock (product id to <see cref="StockItem"/>); each item follows its product by delete (dependency D2).</summary>
public interface IStockActor : ITransactionalActor, IGrainWithIntegerKey
{
    /// <summary>Stocks the seller's products and makes each stock item depend on its product.</summary>
    Task AddStock(TxnContext ctx, Dictionary<int, int> quantities);

    /// <summary>Takes the quantities; fails (and the checkout with it) if one is not in stock.</summary>
    Task Reserve(TxnContext ctx, Reservation reservation);

    /// <summary>By hand: the product is gone, so is its stock item.</summary>
    Task Remove(TxnContext ctx, int product);

    Task<Dictionary<int, StockItem>> All(TxnContext ctx, int unused);
}

public sealed class StockActor : MarketplaceActor<int, StockItem>, IStockActor
{
    public async Task AddStock(TxnContext ctx, Dictionary<int, int> quantities)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite, [.. quantities.Keys]);
        var products = GrainFactory.GetGrain<IProductActor>(this.GetPrimaryKeyLong());
        foreach (var (product, quantity) in quantities)
        {
            state.Put(product, new StockItem(quantity));
            if (!ByHand)
            {
                await RegisterDeleteDependency(ctx, products, product, product);
            }
        }
    }

    public async Task Remove(TxnContext ctx, int product) => (await GetState(ctx, AccessMode.ReadWrite, product)).Delete(product);

    public async Task Reserve(TxnContext ctx, Reservation reservation)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite, [.. reservation.Quantities.Keys]);
        foreach (var (product, quantity) in reservation.Quantities)
        {
            var left = (state.TryGet(product, out var item) ? item.Quantity : 0) - quantity;
            if (left < 0)
            {
                throw new OutOfStockException($"product {product} has {left + quantity} in stock, {quantity} asked");
            }

            state.Put(product, new StockItem(left));
        }
    }

    public async Task<Dictionary<int, StockItem>> All(TxnContext ctx, int unused) => new((await GetState(ctx, AccessMode.Read)).Entries);
}

[GenerateSerializer]
public sealed class OutOfStockException(string message) : Exception(message);
