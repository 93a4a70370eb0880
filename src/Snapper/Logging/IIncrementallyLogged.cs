using Orleans.Serialization;

namespace Snapper.Logging;

/// <summary>
/// A state logged incrementally (thesis §5.3.3.2): each version logs what changed since the version it was copied
/// from, as <see cref="KeyedEntries"/>, instead of the whole state. Implemented by key-value actors' state.
/// </summary>
/// <remarks>
/// A change record is only useful on top of an earlier state of the actor in this silo's log, so a version logs the
/// whole state instead when that is not known to be there: the state came from elsewhere (a migration), or every
/// version it descends from since then was logged as changes on top of such a state. A version copied from one that
/// was logged whole relies on that record: if it is not committed, neither is the copy (an actor's committed versions
/// form one chain, see <see cref="RecoveredActor.Advance"/>).
/// </remarks>
internal interface IIncrementallyLogged
{
    /// <summary>The log payload of this version: its changes, or the whole state flagged so.</summary>
    byte[] EncodeForLog(Serializer serializer);

    /// <summary>
    /// A private copy for a transaction or batch to change (instead of Orleans' deep copy): it starts with no changes,
    /// and its base is this version.
    /// </summary>
    object NewVersion();
}
