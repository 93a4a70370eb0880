namespace Snapper;

/// <summary>How finely a <see cref="KeyValueActor{TKey, TValue}"/> schedules transactions (thesis §5.3.3.3-4).</summary>
public enum ConcurrencyLevel
{
    /// <summary>
    /// The actor is the unit: PACT batches run on it one after the other, and an ACT that writes any key holds the actor
    /// until it ends. Cheapest when transactions use most of the actor's keys.
    /// </summary>
    Actor,

    /// <summary>
    /// PACT batches whose PACTs declared keys here (<see cref="ActorAccessInfo.AddKeys{TKey}(IAddressable, TKey[])"/>)
    /// run side by side on disjoint keys, each key used by one PACT at a time in the batches' order; a PACT that declared
    /// the actor whole still runs here alone. ACTs take a wait-die lock per key, created when first asked for and dropped
    /// when nobody holds or waits for it; an ACT that acquires the whole collection (to enumerate it) holds the actor
    /// exclusively, even to read.
    /// </summary>
    Key,
}
