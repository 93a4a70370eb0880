namespace Snapper.KeyValue;

/// <summary>
/// The state of a <see cref="KeyValueActor{TKey, TValue}"/> as Snapper keeps, copies, versions and logs it: the actor's
/// keys and values. User code reaches it only through the per-transaction <see cref="DictionaryState{TKey, TValue}"/>.
/// </summary>
/// <remarks>The keys and values must be types Orleans can serialize and copy (mark them <c>[GenerateSerializer]</c>).</remarks>
[GenerateSerializer, Alias("snapper.kv-state`2")]
public sealed class KeyValueState<TKey, TValue>
    where TKey : notnull
{
    [Id(0)]
    internal Dictionary<TKey, TValue> Entries { get; set; } = new();
}
