using System.Buffers.Binary;
using System.Collections.Concurrent;
using System.IO.Hashing;
using System.Text;
using Orleans.Storage;

namespace Snapper.Workloads.Storage;

/// <summary>
/// Grain storage on the local disk for the Orleans Transactions baseline, so that it pays for durability as Snapper
/// does when both log to the same disk: every write is fsynced before it completes. One file per grain state
/// (<c>etag, payload</c>), replaced by writing a temporary file, fsyncing it and renaming it over the old one.
/// ETags are version numbers, checked on every write as Orleans' providers do.
/// </summary>
/// <remarks>
/// Orleans ships storage providers for database servers only; this is the file provider its custom-storage guide
/// describes, kept to what the benchmark needs. Writes to one grain are serialized by Orleans (one activation).
/// </remarks>
public sealed class FileGrainStorage(string folder, bool fsync, IGrainStorageSerializer serializer) : IGrainStorage
{
    private readonly ConcurrentDictionary<string, bool> _createdFolders = new();

    public async Task ReadStateAsync<T>(string stateName, GrainId grainId, IGrainState<T> grainState)
    {
        var path = PathOf(stateName, grainId);
        if (!File.Exists(path))
        {
            GrainStorageRecords.SetAbsent(grainState);
            return;
        }

        var bytes = await File.ReadAllBytesAsync(path);
        grainState.ETag = GrainStorageRecords.ETagOf(BinaryPrimitives.ReadInt64LittleEndian(bytes));
        grainState.State = serializer.Deserialize<T>(new BinaryData(bytes.AsMemory(sizeof(long))));
        grainState.RecordExists = true;
    }

    public async Task WriteStateAsync<T>(string stateName, GrainId grainId, IGrainState<T> grainState)
    {
        var path = PathOf(stateName, grainId);
        var stored = await CheckETagAsync(path, "writing", stateName, grainId, grainState.ETag);
        var version = GrainStorageRecords.VersionOf(stored) + 1;
        var payload = serializer.Serialize(grainState.State).ToMemory();
        // A name of its own per write: should two writes of one record ever overlap (they did once in CI, during the
        // TPC-C baseline's preparation), each renames its own whole file and the last rename wins, instead of one
        // rename finding the other's temporary file gone (or renaming a file the other is still writing).
        var temporary = $"{path}.{Guid.NewGuid():N}.tmp";
        await using (var file = new FileStream(temporary, FileMode.Create, FileAccess.Write, FileShare.None, bufferSize: 4096, useAsync: true))
        {
            var header = new byte[sizeof(long)];
            BinaryPrimitives.WriteInt64LittleEndian(header, version);
            await file.WriteAsync(header);
            await file.WriteAsync(payload);
            file.Flush(flushToDisk: fsync);
        }

        File.Move(temporary, path, overwrite: true);
        grainState.ETag = GrainStorageRecords.ETagOf(version);
        grainState.RecordExists = true;
    }

    public async Task ClearStateAsync<T>(string stateName, GrainId grainId, IGrainState<T> grainState)
    {
        var path = PathOf(stateName, grainId);
        await CheckETagAsync(path, "clearing", stateName, grainId, grainState.ETag);
        File.Delete(path);
        GrainStorageRecords.SetAbsent(grainState);
    }

    /// <summary>Returns the stored ETag, or throws as Orleans' providers do if the grain's does not match it.</summary>
    private static async Task<string?> CheckETagAsync(string path, string operation, string stateName, GrainId grainId, string? expected) =>
        GrainStorageRecords.CheckETag(await StoredETagAsync(path), expected, operation, stateName, grainId);

    private static async Task<string?> StoredETagAsync(string path)
    {
        if (!File.Exists(path))
        {
            return null;
        }

        await using var file = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.Read, bufferSize: 1, useAsync: true);
        var header = new byte[sizeof(long)];
        await file.ReadExactlyAsync(header);
        return GrainStorageRecords.ETagOf(BinaryPrimitives.ReadInt64LittleEndian(header));
    }

    /// <summary>A file per (state, grain), spread over 256 folders; the name is a hash because grain ids may hold any character.</summary>
    private string PathOf(string stateName, GrainId grainId)
    {
        var hash = XxHash64.HashToUInt64(Encoding.UTF8.GetBytes($"{stateName}/{grainId}"));
        var bucket = Path.Combine(folder, (hash & 0xFF).ToString("x2", System.Globalization.CultureInfo.InvariantCulture));
        if (!_createdFolders.ContainsKey(bucket))
        {
            // Created before it is marked, so that no writer uses a folder another writer is still creating.
            Directory.CreateDirectory(bucket);
            _createdFolders.TryAdd(bucket, true);
        }

        return Path.Combine(bucket, $"{hash:x16}.state");
    }
}
