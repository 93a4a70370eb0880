using Marketplace;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Snapper;
using Snapper.Hosting;

// One silo with localhost clustering and Snapper, in this process; settings from the "Snapper" section.
var builder = Host.CreateApplicationBuilder(args);
builder.Logging.SetMinimumLevel(LogLevel.Warning).AddFilter("Orleans", LogLevel.Error);
builder.UseOrleans(silo => silo
    .UseLocalhostClustering()
    .AddSnapper(builder.Configuration.GetSection(SnapperOptions.SectionName)));
using var host = builder.Build();
await host.StartAsync();

var market = new MarketplaceClient(host.Services.GetRequiredService<IGrainFactory>(), new MarketplaceLayout(Sellers: 3, ProductsPerSeller: 5, Customers: 6));
await market.SetUpAsync(price: product => 10m + product, stockPerProduct: 100);
Console.WriteLine("3 sellers with 5 products each, 100 in stock of each; every stock item follows its product by delete,");
Console.WriteLine("every seller's view follows its shipments by a custom update function.");

// AddItemToCart registers the cart item on its product: it gets the product's price now, and every later price.
await market.AddItemToCart(customer: 0, product: 1, quantity: 2);
await market.AddItemToCart(customer: 0, product: 7, quantity: 1);
await market.AddItemToCart(customer: 1, product: 7, quantity: 3);
await market.UpdatePrice(product: 7, price: 99m);
var cart = await market.Cart(1).StartTxn(market.Cart(1).Items, 0);
Console.WriteLine($"UpdatePrice of product 7 to 99: customer 1's cart now has it at {cart[7].Price} (the dependency followed, in the same ACT)");

// Checkout as a PACT: the declaration names every actor it reaches, the ones dependencies reach included.
var order = await market.Checkout(customer: 0, orderId: 1, products: [1, 7], pact: true);
Console.WriteLine($"Checkout (PACT) of customer 0: order 1 of {order.Total} from sellers {string.Join(", ", order.Parts.Select(p => p.Seller))}");
var view = await market.Seller(1).StartTxn(market.Seller(1).View, 0);
Console.WriteLine($"seller 1's view: {view.Orders} order(s), {view.Total} in total (kept by the dependency on its shipments)");

// Deleting a product deletes its stock item (a delete dependency) and ends the carts' dependencies on it.
await market.Products(2).StartTxn(market.Products(2).DeleteProduct, 14);
var stock = await market.Stock(2).StartTxn(market.Stock(2).All, 0);
Console.WriteLine($"DeleteProduct 14: seller 2's stock holds {stock.Count} items, product 14 {(stock.ContainsKey(14) ? "still" : "no longer")} among them");

// A short concurrent mix: customers fill carts and check out (PACTs) while prices change (ACTs).
var random = new Random(5);
var orders = 1L;
var committed = 0;
var aborted = new Dictionary<AbortReason, int>();
await Task.WhenAll(Enumerable.Range(0, market.Layout.Customers).Select(async customer =>
{
    var customerRandom = new Random(customer);
    for (var round = 0; round < 10; round++)
    {
        var products = Enumerable.Range(0, customerRandom.Next(1, 4)).Select(_ => customerRandom.Next(0, 14)).Distinct().ToArray();
        try
        {
            foreach (var product in products)
            {
                await market.AddItemToCart(customer, product, 1);
            }

            if (customer % 2 == 0)
            {
                await market.UpdatePrice(products[0], 20m + round);
            }

            await market.Checkout(customer, Interlocked.Increment(ref orders), [.. (await market.Cart(customer).StartTxn(market.Cart(customer).Items, 0)).Keys], pact: true);
            Interlocked.Increment(ref committed);
        }
        catch (TransactionAbortedException abort)
        {
            lock (aborted)
            {
                aborted[abort.Reason] = aborted.GetValueOrDefault(abort.Reason) + 1;
            }
        }
    }
}));
Console.WriteLine($"concurrent mix: {committed} checkouts committed; aborts: {(aborted.Count == 0 ? "none" : string.Join(", ", aborted.Select(a => $"{a.Key} {a.Value}")))}");

var problems = await market.CheckInvariantsAsync();
foreach (var problem in problems)
{
    Console.WriteLine($"PROBLEM: {problem}");
}

var orderCount = await market.OrderCountAsync();
Console.WriteLine(problems.Count == 0
    ? $"Invariants: OK ({orderCount} orders; cart prices, stock and seller views all agree)"
    : $"Invariants: {problems.Count} problem(s)");
await host.StopAsync();
return problems.Count == 0 ? 0 : 1;
