using BenchmarkDotNet.Attributes;
using Snapper.Act;

namespace Snapper.Benchmarks.Micro;

/// <summary>
/// What a transaction pays at every actor it touches for the S2PL lock: one acquire and one release, without
/// contention (the common case under low skew), and two readers sharing the lock.
/// </summary>
[MemoryDiagnoser]
public class LockBenchmarks
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(5);
    private readonly WaitDieLock _lock = new();
    private long _tid;

    [Benchmark(Baseline = true)]
    public Task AcquireReleaseWrite()
    {
        var tid = ++_tid;
        var acquired = _lock.AcquireAsync(tid, AccessMode.ReadWrite, Timeout);
        _lock.Release(tid);
        return acquired;
    }

    [Benchmark]
    public Task TwoReadersShare()
    {
        var (older, younger) = (++_tid, ++_tid);
        var first = _lock.AcquireAsync(older, AccessMode.Read, Timeout);
        var second = _lock.AcquireAsync(younger, AccessMode.Read, Timeout);
        _lock.Release(younger);
        _lock.Release(older);
        return Task.WhenAll(first, second);
    }
}
