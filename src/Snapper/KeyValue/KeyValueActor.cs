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
/// Concurrency control is per actor: acquiring any key for writing takes the actor's write access (an ACT's exclusive
/// lock; a PACT already has its turn), and the transaction works on its own copy of the collection.
/// </remarks>
public abstract partial class KeyValueActor<TKey, TValue> : TransactionalActor<KeyValueState<TKey, TValue>>, IDependencyEndpoints
    where TKey : notnull
{
    /// <summary>
    /// Acquires <paramref name="keys"/> for the transaction, each in its mode, and returns its view of the state (the same
    /// object on every call of the transaction here). A key acquired before keeps the stronger of its two modes.
    /// </summary>
    /// <exception cref="TransactionAbortedException">The transaction must abort (wait-die, lock timeout, or it was aborted meanwhile).</exception>
    /// <exception cref="TransactionNotActiveException">The context's transaction is not running on this actor.</exception>
    protected async Task<DictionaryState<TKey, TValue>> GetState(TxnContext context, IReadOnlyDictionary<TKey, AccessMode> keys)
    {
        ArgumentNullException.ThrowIfNull(keys);
        var wanted = keys.Values.Any(m => m == AccessMode.ReadWrite) ? AccessMode.ReadWrite : AccessMode.Read;
        var (view, state) = await AcquireAsync(context, wanted);
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
        var (view, state) = await AcquireAsync(context, mode);
        view.ExtendToAll(mode, state);
        return view;
    }

    /// <summary>A key-value actor starts empty: its keys are created by transactions (and so are in its log).</summary>
    protected sealed override KeyValueState<TKey, TValue> CreateInitialState() => KeyValueState<TKey, TValue>.Empty();

    private protected sealed override KeyValueState<TKey, TValue> RestoreState(Logging.RecoveredActor recovered) => recovered.Incremental
        ? KeyValueState<TKey, TValue>.FromLog(recovered.State!, ServiceProvider.GetRequiredService<Orleans.Serialization.Serializer>())
        : base.RestoreState(recovered); // logged whole by an earlier Snapper

    private async Task<(DictionaryState<TKey, TValue> View, KeyValueState<TKey, TValue> State)> AcquireAsync(TxnContext context, AccessMode wanted)
    {
        ArgumentNullException.ThrowIfNull(context);
        var existing = TransactionScoped<DictionaryState<TKey, TValue>>(context, create: null);
        var mode = existing?.Strongest == AccessMode.ReadWrite ? AccessMode.ReadWrite : wanted;
        var state = await base.GetState(context, mode);
        var view = existing ?? TransactionScoped(context, () => new DictionaryState<TKey, TValue>(this.GetGrainId().ToString(), state))!;
        return (view, state);
    }
}
