using System.Diagnostics;

namespace Snapper.Runner.Experiment;

/// <summary>The process's memory at one moment of a soak (the embedded silo and its client loops share the process).</summary>
/// <param name="WorkingSetMib">Working set.</param>
/// <param name="GcHeapMib">GC heap size at the last collection the runtime chose to make.</param>
/// <param name="LiveHeapMib">Heap still in use after a full blocking collection forced at this moment.</param>
/// <param name="Collections">Collections the runtime made since the previous sample (the forced ones not counted).</param>
public sealed record MemorySample(double WorkingSetMib, double GcHeapMib, double LiveHeapMib, int Collections);

/// <summary>
/// Samples <see cref="MemorySample"/>s. The heap after a forced full collection is the number that shows a leak: with the
/// server GC's large young generation, the heap at the last ordinary collection swings by hundreds of MiB with timing
/// alone. One forced collection a minute costs the load well under a second.
/// </summary>
public sealed class MemoryProbe
{
    private const double Mib = 1024.0 * 1024.0;
    private int _collectionsSeen = GC.CollectionCount(0);

    public MemorySample Sample()
    {
        using var process = Process.GetCurrentProcess();
        var workingSet = process.WorkingSet64;
        var heap = GC.GetGCMemoryInfo().HeapSizeBytes;
        var collections = GC.CollectionCount(0) - _collectionsSeen; // a collection of any generation counts in generation 0
        var live = GC.GetTotalMemory(forceFullCollection: true);
        _collectionsSeen = GC.CollectionCount(0);
        return new MemorySample(workingSet / Mib, heap / Mib, live / Mib, collections);
    }
}
