using Snapper;

namespace Marketplace;

/// <summary>A customer's cart: product id to <see cref="CartItem"/>, each following its product's price (dependency D1).</summary>
public interface ICartActor : ITransactionalActor, IGrainWithIntegerKey
{
    /// <summary>AddItemToCart: a new item registers on its product (and so gets its price); an item already there grows.</summary>
    Task AddItem(TxnContext ctx, AddToCart add);

    /// <summary>DeleteItemInCart: deleting the item ends its dependency at the product.</summary>
    Task<bool> DeleteItem(TxnContext ctx, int product);

    /// <summary>Checkout (a PACT in the benchmark): stock, order, payment, customer and shipments, then an empty cart.</summary>
    Task<Order> Checkout(TxnContext ctx, CheckoutRequest request);

    Task<Dictionary<int, CartItem>> Items(TxnContext ctx, int unused);

    /// <summary>By hand: the product's new price, called by the product actor.</summary>
    Task SetPrice(TxnContext ctx, PriceChange change);
}

public sealed class CartActor : MarketplaceActor<int, CartItem>, ICartActor
{
    private int Customer => (int)this.GetPrimaryKeyLong();

    public async Task AddItem(TxnContext ctx, AddToCart add)
    {
        var cart = await GetState(ctx, AccessMode.ReadWrite, add.Product);
        var products = GrainFactory.GetGrain<IProductActor>(add.Seller);
        if (!cart.ContainsKey(add.Product) && ByHand)
        {
            var prices = await CallActor(ctx, products.AddCarts, new CartLinks([Customer], [add.Product]));
            cart.Put(add.Product, new CartItem(add.Seller, prices[0], Quantity: 0));
        }
        else if (!cart.ContainsKey(add.Product))
        {
            await RegisterUpdateDependency(ctx, products, add.Product, add.Product, new PriceIntoCartItem());
        }

        var item = cart.Get(add.Product);
        cart.Put(add.Product, item with { Quantity = item.Quantity + add.Quantity });
    }

    public async Task<bool> DeleteItem(TxnContext ctx, int product)
    {
        var cart = await GetState(ctx, AccessMode.ReadWrite, product);
        if (!ByHand || !cart.TryGet(product, out var item))
        {
            return cart.Delete(product);
        }

        cart.Delete(product);
        await CallActor(ctx, GrainFactory.GetGrain<IProductActor>(item.Seller).RemoveCarts, new CartLinks([Customer], [product]));
        return true;
    }

    public async Task SetPrice(TxnContext ctx, PriceChange change)
    {
        var cart = await GetState(ctx, AccessMode.ReadWrite, change.Product);
        if (cart.TryGet(change.Product, out var item))
        {
            cart.Put(change.Product, item with { Price = change.Price });
        }
    }

    public async Task<Order> Checkout(TxnContext ctx, CheckoutRequest request)
    {
        var layout = request.Layout;
        var cart = await GetState(ctx, AccessMode.ReadWrite);
        var items = cart.Entries.ToArray();
        if (items.Length == 0)
        {
            throw new InvalidOperationException($"the cart of customer {request.Customer} is empty");
        }

        var bySeller = items.GroupBy(i => i.Value.Seller).ToArray();
        var order = new Order(request.OrderId, request.Customer,
            [.. bySeller.Select(s => new OrderPart(s.Key, s.Sum(i => i.Value.Quantity), s.Sum(i => i.Value.Price * i.Value.Quantity)))]);
        var payment = new Payment(request.Customer, order.Total);
        var calls = new List<Task>
        {
            CallActor(ctx, GrainFactory.GetGrain<IOrderActor>(layout.OrderActorOf(request.Customer)).Create, order),
            CallActor(ctx, GrainFactory.GetGrain<IPaymentActor>(layout.PaymentActorOf(request.Customer)).Pay, KeyValuePair.Create(order.OrderId, payment)),
            CallActor(ctx, GrainFactory.GetGrain<ICustomerActor>(layout.CustomerActorOf(request.Customer)).RecordCheckout, payment),
        };
        calls.AddRange(bySeller.Select(s => CallActor(ctx, GrainFactory.GetGrain<IStockActor>(s.Key).Reserve,
            new Reservation(s.ToDictionary(i => i.Key, i => i.Value.Quantity)))));
        calls.AddRange(order.Parts.GroupBy(p => layout.ShipmentActorOf(p.Seller)).Select(shipment => CallActor(ctx,
            GrainFactory.GetGrain<IShipmentActor>(shipment.Key).Ship, shipment.ToDictionary(p => p.Seller, p => new Package(order.OrderId, p.Amount)))));
        if (ByHand)
        {
            // What the dependencies do otherwise: the carts leave the products, the sellers' views count the packages.
            calls.AddRange(bySeller.Select(s => CallActor(ctx, GrainFactory.GetGrain<IProductActor>(s.Key).RemoveCarts, new CartLinks([Customer], [.. s.Select(i => i.Key)]))));
            calls.AddRange(order.Parts.Select(p => CallActor(ctx, GrainFactory.GetGrain<ISellerActor>(p.Seller).AddPackage, new Package(order.OrderId, p.Amount))));
        }

        await Task.WhenAll(calls);

        // The items leave the cart; their dependencies end at the products when this method returns.
        foreach (var (product, _) in items)
        {
            cart.Delete(product);
        }

        return order;
    }

    public async Task<Dictionary<int, CartItem>> Items(TxnContext ctx, int unused) => new((await GetState(ctx, AccessMode.Read)).Entries);
}
