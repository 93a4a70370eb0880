namespace Marketplace;

/// <summary>
/// Where everything lives: sellers own products (ids <c>seller * ProductsPerSeller + i</c>) on one product actor and one
/// stock actor each; every customer has a cart actor; customers, orders, payments and shipments are spread over a
/// few actors each; a seller's order view is a key of its seller actor.
/// </summary>
[GenerateSerializer, Immutable]
public sealed record MarketplaceLayout(
    [property: Id(0)] int Sellers,
    [property: Id(1)] int ProductsPerSeller,
    [property: Id(2)] int Customers,
    [property: Id(3)] int CustomerActors = 4,
    [property: Id(4)] int OrderActors = 4,
    [property: Id(5)] int PaymentActors = 4,
    [property: Id(6)] int ShipmentActors = 2,
    [property: Id(7)] int FirstCustomer = 0)
{
    /// <summary>The customers' ids (and their carts' actor ids).</summary>
    public IEnumerable<int> CustomerIds => Enumerable.Range(FirstCustomer, Customers);

    public int SellerOf(int product) => product / ProductsPerSeller;

    public IEnumerable<int> ProductsOf(int seller) => Enumerable.Range(seller * ProductsPerSeller, ProductsPerSeller);

    public int CustomerActorOf(int customer) => customer % CustomerActors;

    public int OrderActorOf(int customer) => customer % OrderActors;

    public int PaymentActorOf(int customer) => customer % PaymentActors;

    public int ShipmentActorOf(int seller) => seller % ShipmentActors;
}

/// <summary>A product of a seller; <paramref name="Carts"/>: the customers whose carts hold it, kept only by hand (<see cref="DependencyStyle.ByHand"/>).</summary>
[GenerateSerializer, Immutable]
public sealed record Product([property: Id(0)] int Seller, [property: Id(1)] decimal Price, [property: Id(2)] int[]? Carts = null);

/// <summary>What a seller has of a product. It exists only while the product does (a delete dependency).</summary>
[GenerateSerializer, Immutable]
public sealed record StockItem([property: Id(0)] int Quantity);

/// <summary>A product in a cart. Its price is the product's, kept so by an update dependency.</summary>
[GenerateSerializer, Immutable]
public sealed record CartItem([property: Id(0)] int Seller, [property: Id(1)] decimal Price, [property: Id(2)] int Quantity);

/// <summary>One seller's part of an order.</summary>
[GenerateSerializer, Immutable]
public sealed record OrderPart([property: Id(0)] int Seller, [property: Id(1)] int Items, [property: Id(2)] decimal Amount);

[GenerateSerializer, Immutable]
public sealed record Order([property: Id(0)] long OrderId, [property: Id(1)] int Customer, [property: Id(2)] OrderPart[] Parts)
{
    public decimal Total => Parts.Sum(p => p.Amount);
}

[GenerateSerializer, Immutable]
public sealed record Payment([property: Id(0)] int Customer, [property: Id(1)] decimal Amount);

[GenerateSerializer, Immutable]
public sealed record CustomerInfo([property: Id(0)] int Checkouts, [property: Id(1)] decimal Spent);

/// <summary>The package a seller ships for an order: the shipment actor's key for the seller holds the latest one.</summary>
[GenerateSerializer, Immutable]
public sealed record Package([property: Id(0)] long OrderId, [property: Id(1)] decimal Amount)
{
    /// <summary>The value of a seller's key before any package: nothing shipped.</summary>
    public static Package None { get; } = new(-1, 0);
}

/// <summary>A seller's view of its orders, maintained from its packages by an update dependency.</summary>
[GenerateSerializer, Immutable]
public sealed record SellerView([property: Id(0)] int Orders, [property: Id(1)] decimal Total)
{
    public static SellerView Empty { get; } = new(0, 0);
}

[GenerateSerializer, Immutable]
public sealed record PriceChange([property: Id(0)] int Product, [property: Id(1)] decimal Price);

/// <summary>By hand: the carts of <paramref name="Customers"/> hold (or no longer hold) <paramref name="Products"/>.</summary>
[GenerateSerializer, Immutable]
public sealed record CartLinks([property: Id(0)] int[] Customers, [property: Id(1)] int[] Products);

[GenerateSerializer, Immutable]
public sealed record AddToCart([property: Id(0)] int Product, [property: Id(1)] int Seller, [property: Id(2)] int Quantity);

[GenerateSerializer, Immutable]
public sealed record CheckoutRequest([property: Id(0)] int Customer, [property: Id(1)] long OrderId, [property: Id(2)] MarketplaceLayout Layout);

/// <summary>Products and quantities to take from one seller's stock.</summary>
[GenerateSerializer, Immutable]
public sealed record Reservation([property: Id(0)] Dictionary<int, int> Quantities);
