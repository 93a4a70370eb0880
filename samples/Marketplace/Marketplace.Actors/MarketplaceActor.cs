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

    /// <summary>
    /// Who keeps the three relations between keys of different actors: Snapper's dependencies (the default), or the
    /// actors' own code (<see cref="DependencyStyle.ByHand"/>), which the benchmark compares with them.
    /// </summary>
    public DependencyStyle Dependencies { get; set; } = DependencyStyle.Declared;
}

/// <summary>How the marketplace keeps cart prices, stock and seller views in step with their leaders.</summary>
public enum DependencyStyle
{
    /// <summary>Registered dependencies: Snapper forwards a leader's change to its followers in the same transaction.</summary>
    Declared,

    /// <summary>
    /// The same relations kept by application code: a product lists the carts holding it and calls them when its price
    /// changes, a checkout calls the sellers' views, deleting a product calls its stock. What a user writes without
    /// dependencies; the benchmark measures what declaring them costs against it.
    /// </summary>
    ByHand,
}

/// <summary>A marketplace actor: a key-value actor with the silo's <see cref="MarketplaceOptions.Concurrency"/>.</summary>
public abstract class MarketplaceActor<TKey, TValue> : KeyValueActor<TKey, TValue>
    where TKey : notnull
{
    private MarketplaceOptions? _options;

    // Read once per activation: ByHand is asked on every call.
    private MarketplaceOptions Options => _options ??= ServiceProvider.GetService<IOptions<MarketplaceOptions>>()?.Value ?? new MarketplaceOptions();

    protected override ConcurrencyLevel Concurrency => Options.Concurrency;

    /// <summary>Whether this silo's marketplace keeps its relations in application code (<see cref="DependencyStyle.ByHand"/>).</summary>
    protected bool ByHand => Options.Dependencies == DependencyStyle.ByHand;
}
