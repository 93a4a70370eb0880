using Microsoft.Extensions.DependencyInjection;
using Snapper.KeyValue;

namespace Snapper;

/// <summary>
/// Base class of a transactional actor whose state is a collection of keys and values (SnapperX's DictionaryState,
/// thesis §5.2-5.3), instead of one opaque object. A transaction acquires the keys it uses with
/// <see cref="GetState(TxnContext, IReadOnlyDictionary{TKey, AccessMode})"/>, as often as it likes: every call returns the
/// transaction's one <see cref="DictionaryState{TKey, TValue}"/>, extended by the keys named. <see cref="GetState(TxnContext, AccessMode)"/>
/// acquires the whole collection (to enumerate it). ACTs, PACTs, hybrid execution, logging and recovery work as for
/// <see cref="TransactionalActor{TState}"/>.
/// </summary>
/// <typeparam name="TKey">The key type: Orleans-serializable, with value equality.</typeparam>
/// <typeparam name="TValue">The value type: Orleans-serializable and copyable.</typeparam>
/// <remarks>
/// Concurrency control is chosen when the actor is made (<see cref="ConcurrencyLevel"/>). At actor level, acquiring any
/// key for writing takes the actor's write access (an ACT's exclusive lock; a PACT already has its turn), and the
/// transaction works on its own copy of the collection. At key level, PACTs that declared keys here wait only for the
/// PACTs before them that declared the same keys, and ACTs take a wait-die lock per key (and the actor's lock for
/// reading): <c>GetState</c> returns when the keys it names are free for them. Acquiring the whole collection takes the
/// actor's lock for writing, reading included, so it waits for every ACT holding keys.
/// </remarks>
public abstract partial class KeyValueActor<TKey, TValue> : TransactionalActor<KeyValueState<TKey, TValue>>, IDependencyEndpoints
    where TKey : notnull
{
    private readonly ConcurrencyLevel _concurrency;

    /// <summary>Makes the actor with the concurrency control it uses for its whole life.</summary>
    protected KeyValueActor(ConcurrencyLevel concurrency = ConcurrencyLevel.Actor)
    {
        if (!Enum.IsDefined(concurrency))
        {
            throw new ArgumentOutOfRangeException(nameof(concurrency), concurrency, "Choose ConcurrencyLevel.Actor or ConcurrencyLevel.Key.");
        }

        _concurrency = concurrency;
    }

    /// <summary>
    /// The concurrency control of this actor: by default the one it was made with. Read once per silo, when the actor is
    /// first activated there (the grain's id is known then); it must stay the same for the actor's whole life.
    /// </summary>
    protected virtual ConcurrencyLevel Concurrency => _concurrency;

    private protected sealed override bool KeyLevelConcurrency => Concurrency == ConcurrencyLevel.Key;

    /// <summary>
    /// Acquires <paramref name="keys"/> for the transaction, each in its mode, and returns its view of the state (the same
    /// object on every call of the transaction here). A key acquired before keeps the stronger of its two modes.
    /// </summary>
    /// <exception cref="TransactionAbortedException">The transaction must abort (wait-die, lock timeout, a key its
    /// <see cref="ActorAccessInfo"/> does not declare, or it was aborted meanwhile).</exception>
    /// <exception cref="TransactionNotActiveException">The context's transaction is not running on this actor.</exception>
    protected async Task<DictionaryState<TKey, TValue>> GetState(TxnContext context, IReadOnlyDictionary<TKey, AccessMode> keys)
    {
        ArgumentNullException.ThrowIfNull(context);
        ArgumentNullException.ThrowIfNull(keys);
        var keysChecked = false;
        if (context.Mode == TxnMode.Pact)
        {
            // Checks the keys against the declaration; in a keyed batch, also waits for them and returns the PACT's own version.
            if (await KeyedPactStateAsync(context, [.. keys.Keys.Cast<object>()]) is { } own)
            {
                var keyed = TransactionScoped(context, () => new DictionaryState<TKey, TValue>(this.GetGrainId().ToString(), own))!;
                keyed.Extend(keys, own);
                return keyed;
            }

            keysChecked = true;
        }
        else if (KeyLevelConcurrency && await KeyedActStateAsync(context, keys.ToDictionary(pair => (object)pair.Key, pair => pair.Value)) is { } working)
        {
            // A key-level actor: the ACT locked these keys only, and its copy has them as their last writers left them.
            var keyed = TransactionScoped(context, () => new DictionaryState<TKey, TValue>(this.GetGrainId().ToString(), working))!;
            keyed.Extend(keys, working);
            return keyed;
        }

        var wanted = keys.Values.Any(m => m == AccessMode.ReadWrite) ? AccessMode.ReadWrite : AccessMode.Read;
        var (view, state) = await AcquireAsync(context, wanted, keysChecked);
        view.Extend(keys, state);
        return view;
    }

    /// <summary>Acquires <paramref name="keys"/> in <paramref name="mode"/>; see <see cref="GetState(TxnContext, IReadOnlyDictionary{TKey, AccessMode})"/>.</summary>
    protected Task<DictionaryState<TKey, TValue>> GetState(TxnContext context, AccessMode mode, params TKey[] keys) =>
        GetState(context, keys.Distinct().ToDictionary(key => key, _ => mode));

    /// <summary>
    /// Acquires the whole collection in <paramref name="mode"/> (every key, including ones other transactions would create),
    /// so that the transaction can enumerate it (<see cref="DictionaryState{TKey, TValue}.Entries"/>).
    /// </summary>
    protected new async Task<DictionaryState<TKey, TValue>> GetState(TxnContext context, AccessMode mode)
    {
        var (view, state) = await AcquireAsync(context, mode, keysChecked: false);
        view.ExtendToAll(mode, state);
        return view;
    }

    /// <summary>A key-value actor starts empty: its keys are created by transactions (and so are in its log).</summary>
    protected sealed override KeyValueState<TKey, TValue> CreateInitialState() => KeyValueState<TKey, TValue>.Empty();

    private protected sealed override KeyValueState<TKey, TValue> RestoreState(Logging.RecoveredActor recovered) => recovered.Incremental
        ? KeyValueState<TKey, TValue>.FromLog(recovered.State!, ServiceProvider.GetRequiredService<Orleans.Serialization.Serializer>())
        : base.RestoreState(recovered); // logged whole by an earlier Snapper

    private async Task<(DictionaryState<TKey, TValue> View, KeyValueState<TKey, TValue> State)> AcquireAsync(TxnContext context, AccessMode wanted, bool keysChecked)
    {
        ArgumentNullException.ThrowIfNull(context);
        var existing = TransactionScoped<DictionaryState<TKey, TValue>>(context, create: null);
        var mode = existing?.Strongest == AccessMode.ReadWrite ? AccessMode.ReadWrite : wanted;
        var state = await GetStateCore(context, mode, keysChecked);
        var view = existing ?? TransactionScoped(context, () => new DictionaryState<TKey, TValue>(this.GetGrainId().ToString(), state))!;
        return (view, state);
    }
}
