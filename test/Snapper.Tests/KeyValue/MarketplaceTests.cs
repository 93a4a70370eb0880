using Microsoft.Extensions.DependencyInjection;
using Marketplace;
using Xunit;

namespace Snapper.Tests.KeyValue;

/// <summary>
/// The Online Marketplace (thesis §5.4.6) through the public API: its three dependencies hold under single
/// transactions with known results and under a concurrent mix of ACTs and PACTs.
/// </summary>
[Collection(ClusterCollection.Name)]
public sealed class MarketplaceTests(ClusterFixture fixture)
{
    [Fact]
    public Task Prices_stock_and_seller_views_follow_their_leaders_and_a_concurrent_mix_keeps_every_invariant() =>
        RunMarketplaceAsync(fixture.Client);

    /// <summary>The same on a silo of its own whose marketplace actors use key-level concurrency control.</summary>
    [Fact]
    public async Task The_marketplace_keeps_every_invariant_with_key_level_concurrency_control()
    {
        await using var cluster = await ClusterFixture.StartAsync(_ => { },
            silo => silo.Services.Configure<MarketplaceOptions>(o => o.Concurrency = ConcurrencyLevel.Key));
        await RunMarketplaceAsync(cluster.Client);
    }

    /// <summary>The same relations kept by the actors' own code, the benchmark's baseline for what dependencies cost.</summary>
    [Fact]
    public async Task The_marketplace_keeps_every_invariant_with_its_relations_kept_by_hand()
    {
        await using var cluster = await ClusterFixture.StartAsync(_ => { },
            silo => silo.Services.Configure<MarketplaceOptions>(o => o.Dependencies = DependencyStyle.ByHand));
        await RunMarketplaceAsync(cluster.Client);
    }

    private static async Task RunMarketplaceAsync(IGrainFactory grains)
    {
        // The sellers' actors have fixed ids (0 to Sellers - 1): in the shared silo, this is the only test that uses them.
        var market = new MarketplaceClient(grains, new MarketplaceLayout(Sellers: 3, ProductsPerSeller: 4, Customers: 8));
        await market.SetUpAsync(price: product => 10m + product, stockPerProduct: 100);

        await market.AddItemToCart(customer: 0, product: 1, quantity: 2);
        await market.AddItemToCart(customer: 0, product: 5, quantity: 1);
        await market.UpdatePrice(product: 5, price: 50m);
        Assert.Equal(50m, (await market.Cart(0).StartTxn(market.Cart(0).Items, 0))[5].Price);

        var order = await market.Checkout(customer: 0, orderId: 1, products: [1, 5], pact: true);
        Assert.Equal(2 * 11m + 50m, order.Total);
        Assert.Equal(new SellerView(1, 22m), await market.Seller(0).StartTxn(market.Seller(0).View, 0));
        Assert.Equal(new SellerView(1, 50m), await market.Seller(1).StartTxn(market.Seller(1).View, 0));
        Assert.Equal(98, (await market.Stock(0).StartTxn(market.Stock(0).All, 0))[1].Quantity);
        Assert.Empty(await market.Cart(0).StartTxn(market.Cart(0).Items, 0));

        // A checkout that leaves out an actor a dependency reaches (the product actor whose follower it deletes) aborts.
        await market.AddItemToCart(customer: 1, product: 2, quantity: 1);
        var cart = market.Cart(1);
        var undeclared = await Assert.ThrowsAsync<TransactionAbortedException>(() => cart.StartTxn(cart.Checkout, new CheckoutRequest(1, 2, market.Layout),
            ActorAccessInfo.Of(cart, grains.GetGrain<IOrderActor>(1), grains.GetGrain<IPaymentActor>(1), grains.GetGrain<ICustomerActor>(1),
                market.Stock(0), market.Seller(0), grains.GetGrain<IShipmentActor>(0))));
        Assert.Equal(AbortReason.UndeclaredAccess, undeclared.Reason);
        Assert.Single(await cart.StartTxn(cart.Items, 0));

        // Deleting a product deletes its stock item.
        Assert.True(await market.Products(2).StartTxn(market.Products(2).DeleteProduct, 9));
        Assert.Equal([8, 10, 11], (await market.Stock(2).StartTxn(market.Stock(2).All, 0)).Keys.Order());

        // Customers fill carts and check out (PACTs for even customers, ACTs for odd ones) while prices change.
        var committed = 1;
        await Task.WhenAll(market.Layout.CustomerIds.Select(async customer =>
        {
            var random = new Random(customer);
            for (var round = 0; round < 5; round++)
            {
                try
                {
                    var products = Enumerable.Range(0, random.Next(1, 4)).Select(_ => random.Next(0, 8)).Distinct().ToArray();
                    foreach (var product in products)
                    {
                        await market.AddItemToCart(customer, product, 1);
                    }

                    await market.UpdatePrice(products[0], 20m + round);
                    var items = (await market.Cart(customer).StartTxn(market.Cart(customer).Items, 0)).Keys.ToArray();
                    await market.Checkout(customer, 1_000 * (customer + 1) + round, items, pact: customer % 2 == 0);
                    Interlocked.Increment(ref committed);
                }
                catch (TransactionAbortedException)
                {
                    // An ACT may give way (wait-die, hybrid); nothing of it stays.
                }
            }
        }));

        Assert.Empty(await market.CheckInvariantsAsync());
        Assert.Equal(committed, await market.OrderCountAsync());
        Assert.True(committed > 1, "no checkout of the concurrent mix committed");
    }
}
