using System.Globalization;
using Orleans.Storage;

namespace Snapper.Workloads.Storage;

/// <summary>
/// What the benchmark's grain storages share, so that the file and the memory storage give Orleans Transactions the
/// same contract: ETags are version numbers of a grain's record, checked on every write and clear as Orleans' own
/// providers check theirs, and a grain without a record gets a fresh state and no ETag.
/// </summary>
internal static class GrainStorageRecords
{
    /// <summary>The ETag of a record at the given version.</summary>
    public static string ETagOf(long version) => version.ToString(CultureInfo.InvariantCulture);

    /// <summary>The version an ETag names; no ETag (no record) is version zero, so the first write is version 1.</summary>
    public static long VersionOf(string? etag) => etag is null ? 0 : long.Parse(etag, CultureInfo.InvariantCulture);

    /// <summary>
    /// Returns the stored ETag, or throws <see cref="InconsistentStateException"/> as Orleans' providers do if the
    /// grain's does not match it: the grain's view of its record is stale, and writing would lose the newer one.
    /// </summary>
    public static string? CheckETag(string? stored, string? expected, string operation, string stateName, GrainId grainId) =>
        stored == expected
            ? stored
            : throw new InconsistentStateException($"ETag mismatch {operation} {stateName} of {grainId}", stored, expected);

    /// <summary>Gives a grain the view of a record that does not exist (never written, or cleared).</summary>
    public static void SetAbsent<T>(IGrainState<T> grainState)
    {
        grainState.State = Activator.CreateInstance<T>();
        grainState.ETag = null;
        grainState.RecordExists = false;
    }
}
