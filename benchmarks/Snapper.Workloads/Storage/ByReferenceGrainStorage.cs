using System.Collections.Concurrent;
using Orleans.Storage;

namespace Snapper.Workloads.Storage;

/// <summary>
/// Grain storage in memory that keeps each grain's record by reference, for the Orleans Transactions baseline when
/// nothing is logged: the stored object is the state object itself, nothing is serialized or copied, so the baseline
/// pays for transactions only, as Snapper does without a data folder. ETags are version numbers, incremented on each
/// write and checked on every write and clear as <see cref="FileGrainStorage"/> checks them.
/// </summary>
/// <remarks>
/// Orleans' memory storage serializes the whole record on every write, and Orleans Transactions writes a
/// participant's record on every transaction, readers included (it stores their timestamp): with TPC-C's item and
/// customer tables that serialization, not the transactions, was most of the silo's work.
/// <para>
/// Keeping the reference is safe because Orleans Transactions copies a state before it writes it: a transaction's
/// first update deep-copies the state and changes only the copy, which is what it then prepares and commits, so a
/// state the record refers to is never changed after it was written. The record object itself (committed state,
/// prepared states, metadata) belongs to the grain's activation, which changes it only right before it writes it.
/// So the reference always holds what a serialized copy of the last write would.
/// </para>
/// </remarks>
public sealed class ByReferenceGrainStorage : IGrainStorage
{
    private readonly ConcurrentDictionary<(string StateName, GrainId GrainId), Record> _records = new();

    public Task ReadStateAsync<T>(string stateName, GrainId grainId, IGrainState<T> grainState)
    {
        if (_records.TryGetValue((stateName, grainId), out var record))
        {
            lock (record)
            {
                if (record.Exists)
                {
                    grainState.State = (T)record.State!;
                    grainState.ETag = GrainStorageRecords.ETagOf(record.Version);
                    grainState.RecordExists = true;
                    return Task.CompletedTask;
                }
            }
        }

        GrainStorageRecords.SetAbsent(grainState);
        return Task.CompletedTask;
    }

    public Task WriteStateAsync<T>(string stateName, GrainId grainId, IGrainState<T> grainState)
    {
        var record = _records.GetOrAdd((stateName, grainId), static _ => new Record());
        long version;
        lock (record)
        {
            GrainStorageRecords.CheckETag(record.ETag, grainState.ETag, "writing", stateName, grainId);
            version = ++record.Version;
            record.State = grainState.State;
            record.Exists = true;
        }

        grainState.ETag = GrainStorageRecords.ETagOf(version);
        grainState.RecordExists = true;
        return Task.CompletedTask;
    }

    public Task ClearStateAsync<T>(string stateName, GrainId grainId, IGrainState<T> grainState)
    {
        var record = _records.GetOrAdd((stateName, grainId), static _ => new Record());
        lock (record)
        {
            GrainStorageRecords.CheckETag(record.ETag, grainState.ETag, "clearing", stateName, grainId);
            record.State = null;
            record.Exists = false;
        }

        GrainStorageRecords.SetAbsent(grainState);
        return Task.CompletedTask;
    }

    /// <summary>
    /// One grain's record. Orleans serializes the calls of one activation, but a new activation of the grain may
    /// read while the old one still writes, so the version and the state change together under the record's lock.
    /// A cleared record keeps its version, so that an ETag from before the clear never matches a later write.
    /// </summary>
    private sealed class Record
    {
        public long Version;
        public object? State;
        public bool Exists;

        public string? ETag => Exists ? GrainStorageRecords.ETagOf(Version) : null;
    }
}
