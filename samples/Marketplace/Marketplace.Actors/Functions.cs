using Snapper.KeyValue;

namespace Marketplace;

/// <summary>Dependency D1 (thesis Fig. 5.1): a cart item takes its product's price whenever the price changes.</summary>
[GenerateSerializer, Immutable]
public sealed class PriceIntoCartItem : IUpdateFunction<int, Product, int, CartItem>
{
    public CartItem Apply(int product, Product oldProduct, Product newProduct, int item, CartItem? current) =>
        current is null ? new CartItem(newProduct.Seller, newProduct.Price, Quantity: 0) : current with { Price = newProduct.Price };
}

/// <summary>
/// Dependency D3 (thesis Fig. 5.3, <c>SellerDashboardFunction</c>): a seller's view counts each package its shipment key
/// receives. At registration (old and new value alike) it counts nothing.
/// </summary>
[GenerateSerializer, Immutable]
public sealed class AddPackageToView : IUpdateFunction<int, Package, int, SellerView>
{
    public SellerView Apply(int seller, Package oldPackage, Package newPackage, int viewKey, SellerView? view)
    {
        view ??= SellerView.Empty;
        return oldPackage == newPackage ? view : new SellerView(view.Orders + 1, view.Total + newPackage.Amount);
    }
}
