using Snapper;

namespace Marketplace;

/// <summary>Orders of some customers (order id to <see cref="Order"/>).</summary>
public interface IOrderActor : ITransactionalActor, IGrainWithIntegerKey
{
    Task Create(TxnContext ctx, Order order);

    Task<Dictionary<long, Order>> All(TxnContext ctx, int unused);
}

public sealed class OrderActor : MarketplaceActor<long, Order>, IOrderActor
{
    public async Task Create(TxnContext ctx, Order order) => (await GetState(ctx, AccessMode.ReadWrite, order.OrderId)).Put(order.OrderId, order);

    public async Task<Dictionary<long, Order>> All(TxnContext ctx, int unused) => new((await GetState(ctx, AccessMode.Read)).Entries);
}

/// <summary>Payments of some customers (order id to <see cref="Payment"/>).</summary>
public interface IPaymentActor : ITransactionalActor, IGrainWithIntegerKey
{
    Task Pay(TxnContext ctx, KeyValuePair<long, Payment> payment);
}

public sealed class PaymentActor : MarketplaceActor<long, Payment>, IPaymentActor
{
    public async Task Pay(TxnContext ctx, KeyValuePair<long, Payment> payment) =>
        (await GetState(ctx, AccessMode.ReadWrite, payment.Key)).Put(payment.Key, payment.Value);
}

/// <summary>Customers (customer id to <see cref="CustomerInfo"/>).</summary>
public interface ICustomerActor : ITransactionalActor, IGrainWithIntegerKey
{
    Task RecordCheckout(TxnContext ctx, Payment payment);
}

public sealed class CustomerActor : MarketplaceActor<int, CustomerInfo>, ICustomerActor
{
    public async Task RecordCheckout(TxnContext ctx, Payment payment)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite, payment.Customer);
        var info = state.TryGet(payment.Customer, out var known) ? known : new CustomerInfo(0, 0);
        state.Put(payment.Customer, new CustomerInfo(info.Checkouts + 1, info.Spent + payment.Amount));
    }
}

/// <summary>Shipments of some sellers: seller id to the latest <see cref="Package"/> shipped (the leader of the seller's view).</summary>
public interface IShipmentActor : ITransactionalActor, IGrainWithIntegerKey
{
    Task OpenSellers(TxnContext ctx, int[] sellers);

    /// <summary>Ships one package per seller; each seller's view follows when this method returns.</summary>
    Task Ship(TxnContext ctx, Dictionary<int, Package> packages);
}

public sealed class ShipmentActor : MarketplaceActor<int, Package>, IShipmentActor
{
    public async Task OpenSellers(TxnContext ctx, int[] sellers)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite, sellers);
        foreach (var seller in sellers.Where(s => !state.ContainsKey(s)))
        {
            state.Put(seller, Package.None);
        }
    }

    public async Task Ship(TxnContext ctx, Dictionary<int, Package> packages)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite, [.. packages.Keys]);
        foreach (var (seller, package) in packages)
        {
            state.Put(seller, package);
        }
    }
}

/// <summary>A seller's dashboard: its id to a <see cref="SellerView"/> of its orders (dependency D3 on its shipment key).</summary>
public interface ISellerActor : ITransactionalActor, IGrainWithIntegerKey
{
    /// <summary>Makes the seller's view follow its key of the shipment actor <paramref name="shipmentActor"/>.</summary>
    Task FollowShipments(TxnContext ctx, int shipmentActor);

    /// <summary>By hand: counts a package shipped for this seller in its view.</summary>
    Task AddPackage(TxnContext ctx, Package package);

    Task<SellerView> View(TxnContext ctx, int unused);
}

public sealed class SellerActor : MarketplaceActor<int, SellerView>, ISellerActor
{
    private int Seller => (int)this.GetPrimaryKeyLong();

    public Task FollowShipments(TxnContext ctx, int shipmentActor) => ByHand
        ? Task.CompletedTask
        : RegisterUpdateDependency(ctx, GrainFactory.GetGrain<IShipmentActor>(shipmentActor), Seller, Seller, new AddPackageToView());

    public async Task AddPackage(TxnContext ctx, Package package)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite, Seller);
        var view = state.TryGet(Seller, out var known) ? known : SellerView.Empty;
        state.Put(Seller, new AddPackageToView().Apply(Seller, Package.None, package, Seller, view));
    }

    public async Task<SellerView> View(TxnContext ctx, int unused) =>
        (await GetState(ctx, AccessMode.Read, Seller)).TryGet(Seller, out var view) ? view : SellerView.Empty;
}
