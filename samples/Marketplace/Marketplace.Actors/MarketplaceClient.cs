using Snapper;

namespace Marketplace;

/// <summary>
/// The client side of the marketplace: sets it up, submits its transactions (declaring a checkout's accesses when it
/// runs as a PACT) and checks the invariants its dependencies keep. Used by the sample, the runner workload and the tests.
/// </summary>
public sealed class MarketplaceClient(IGrainFactory grains, MarketplaceLayout layout)
{
    public MarketplaceLayout Layout => layout;

    public IProductActor Products(int seller) => grains.GetGrain<IProductActor>(seller);

    public IStockActor Stock(int seller) => grains.GetGrain<IStockActor>(seller);

    public ICartActor Cart(int customer) => grains.GetGrain<ICartActor>(customer);

    public ISellerActor Seller(int seller) => grains.GetGrain<ISellerActor>(seller);

    /// <summary>
    /// Creates every seller's products (price <paramref name="price"/> of the product id) and stock, the shipment keys and
    /// the sellers' views, registering the stock (D2) and view (D3) dependencies.
    /// </summary>
    public async Task SetUpAsync(Func<int, decimal> price, int stockPerProduct)
    {
        for (var shipment = 0; shipment < layout.ShipmentActors; shipment++)
        {
            var actor = grains.GetGrain<IShipmentActor>(shipment);
            var sellers = Enumerable.Range(0, layout.Sellers).Where(s => layout.ShipmentActorOf(s) == shipment).ToArray();
            await actor.StartTxn(actor.OpenSellers, sellers);
        }

        // One seller after another: sellers share shipment actors, and concurrent registrations there would give way
        // to each other (wait-die).
        for (var seller = 0; seller < layout.Sellers; seller++)
        {
            var id = seller;
            await Products(seller).StartTxn(Products(seller).AddProducts, layout.ProductsOf(seller).ToDictionary(p => p, p => new Product(id, price(p))));
            await Stock(seller).StartTxn(Stock(seller).AddStock, layout.ProductsOf(seller).ToDictionary(p => p, _ => stockPerProduct));
            await Seller(seller).StartTxn(Seller(seller).FollowShipments, layout.ShipmentActorOf(seller));
        }
    }

    /// <summary>AddItemToCart as an ACT.</summary>
    public Task AddItemToCart(int customer, int product, int quantity) =>
        Cart(customer).StartTxn(Cart(customer).AddItem, new AddToCart(product, layout.SellerOf(product), quantity));

    /// <summary>DeleteItemInCart as an ACT.</summary>
    public Task<bool> DeleteItemInCart(int customer, int product) => Cart(customer).StartTxn(Cart(customer).DeleteItem, product);

    /// <summary>UpdatePrice as an ACT: which carts hold the product is known only to the product's dependencies.</summary>
    public Task UpdatePrice(int product, decimal price) =>
        Products(layout.SellerOf(product)).StartTxn(Products(layout.SellerOf(product)).UpdatePrice, new PriceChange(product, price));

    /// <summary>
    /// Checkout of the cart holding <paramref name="products"/>; as a PACT it declares every actor the checkout reaches,
    /// and the keys it uses there: the cart (whole: the checkout empties it), its order and payment (the order id), its
    /// customer (the customer id), each seller's stock (the seller's products in the cart), the shipment actors (their
    /// sellers), and, through the dependencies, each seller's view (a package forwarded) and product actor (the cart
    /// items' dependencies ended there). Actors at actor level check the keys too, and run the PACT as a whole.
    /// </summary>
    public Task<Order> Checkout(int customer, long orderId, IReadOnlyCollection<int> products, bool pact)
    {
        var cart = Cart(customer);
        var request = new CheckoutRequest(customer, orderId, layout);
        if (!pact)
        {
            return cart.StartTxn(cart.Checkout, request);
        }

        var accesses = ActorAccessInfo.Of(cart)
            .AddKeys(grains.GetGrain<IOrderActor>(layout.OrderActorOf(customer)), orderId)
            .AddKeys(grains.GetGrain<IPaymentActor>(layout.PaymentActorOf(customer)), orderId)
            .AddKeys(grains.GetGrain<ICustomerActor>(layout.CustomerActorOf(customer)), customer);
        foreach (var sold in products.GroupBy(layout.SellerOf))
        {
            var seller = sold.Key;
            accesses.AddKeys(Stock(seller), [.. sold]).AddKeys(Products(seller), [.. sold]).AddKeys(Seller(seller), seller)
                .AddKeys(grains.GetGrain<IShipmentActor>(layout.ShipmentActorOf(seller)), seller);
        }

        return cart.StartTxn(cart.Checkout, request, accesses);
    }

    /// <summary>
    /// What is wrong with the marketplace, or nothing: every cart item's price equals its product's (D1), no stock item
    /// exists without its product (D2), and each seller's view equals a recomputation from the orders (D3).
    /// </summary>
    public async Task<List<string>> CheckInvariantsAsync()
    {
        var problems = new List<string>();
        var products = new Dictionary<int, Product>();
        for (var seller = 0; seller < layout.Sellers; seller++)
        {
            foreach (var (id, product) in await Products(seller).StartTxn(Products(seller).All, 0))
            {
                products[id] = product;
            }

            foreach (var id in (await Stock(seller).StartTxn(Stock(seller).All, 0)).Keys.Where(id => !products.ContainsKey(id)))
            {
                problems.Add($"seller {seller} has stock of product {id}, which does not exist");
            }
        }

        foreach (var customer in layout.CustomerIds)
        {
            foreach (var (id, item) in await Cart(customer).StartTxn(Cart(customer).Items, 0))
            {
                if (products.TryGetValue(id, out var product) && product.Price != item.Price)
                {
                    problems.Add($"customer {customer}'s cart has product {id} at {item.Price}, the product costs {product.Price}");
                }
            }
        }

        var orders = new List<Order>();
        for (var actor = 0; actor < layout.OrderActors; actor++)
        {
            var orderActor = grains.GetGrain<IOrderActor>(actor);
            orders.AddRange((await orderActor.StartTxn(orderActor.All, 0)).Values);
        }

        for (var seller = 0; seller < layout.Sellers; seller++)
        {
            var parts = orders.SelectMany(o => o.Parts).Where(p => p.Seller == seller).ToArray();
            var expected = new SellerView(parts.Length, parts.Sum(p => p.Amount));
            var view = await Seller(seller).StartTxn(Seller(seller).View, 0);
            if (view != expected)
            {
                problems.Add($"seller {seller}'s view is {view}, its orders give {expected}");
            }
        }

        return problems;
    }

    /// <summary>How many orders there are (for reports).</summary>
    public async Task<int> OrderCountAsync()
    {
        var count = 0;
        for (var actor = 0; actor < layout.OrderActors; actor++)
        {
            var orderActor = grains.GetGrain<IOrderActor>(actor);
            count += (await orderActor.StartTxn(orderActor.All, 0)).Count;
        }

        return count;
    }
}
