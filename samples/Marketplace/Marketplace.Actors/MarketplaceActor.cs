using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Snapper;

namespace Marketplace;

/// <summary>How the marketplace's actors are made, set on the silo (<c>services.Configure&lt;MarketplaceOptions&gt;(...)</c>).</summary>
public sealed class MarketplaceOptions
{
    /// <summary>
    /// Concurrency control of every marketplace actor. At <see cref="ConcurrencyLevel.Key"/>, checkouts (PACTs declaring
    /// the keys they use, see <see cref="MarketplaceClient.Checkout"/>) of different customers and products run side by
    /// side on the shared order, payment, customer, stock and shipment actors.
    /// </summary>
    public ConcurrencyLevel Concurrency { get; set; } = ConcurrencyLevel.Actor;
}

/// <summary>A marketplace actor: a key-value actor with the silo's <see cref="MarketplaceOptions.Concurrency"/>.</summary>
public abstract class MarketplaceActor<TKey, TValue> : KeyValueActor<TKey, TValue>
    where TKey : notnull
{
    protected override ConcurrencyLevel Concurrency =>
        ServiceProvider.GetService<IOptions<MarketplaceOptions>>()?.Value.Concurrency ?? ConcurrencyLevel.Actor;
}
