namespace Snapper.Scheduling;

/// <summary>
/// A state made of keys that <see cref="StateVersions{TState}"/> can version key by key (key-level concurrency control,
/// thesis §5.3.3.3): a version knows which keys it changed since it was made, and can take keys from another version.
/// Implemented by key-value actors' state.
/// </summary>
internal interface IKeyedVersion
{
    /// <summary>Whether a version made from this one logs only its changes (its base is in this silo's log).</summary>
    bool BaseInLog { get; }

    /// <summary>Whether this version changed anything since it was made.</summary>
    bool HasChanges { get; }

    /// <summary>A new version sharing this one's entries (constant time), with no changes yet.</summary>
    object NewVersion();

    /// <summary>Sets <paramref name="keys"/> (values and dependencies) as they are in <paramref name="source"/>, not as changes of this version.</summary>
    void TakeKeys(object source, IEnumerable<object> keys);

    /// <summary>Logs this version's changes as ordered per key (<see cref="Logging.KeyedEntries.KeyOrderedFlag"/>).</summary>
    void OrderPerKey();

    /// <summary>Applies the keys this version changed, as it has them, to <paramref name="target"/>, as changes of the target.</summary>
    void ApplyChangesTo(object target);
}
