using System.Collections.Immutable;
using BenchmarkDotNet.Attributes;
using Microsoft.Extensions.DependencyInjection;
using Orleans.Serialization;
using Snapper.Workloads.Tpcc;

namespace Snapper.Benchmarks.Micro;

/// <summary>An order partition kept in a mutable list, for comparison with the immutable list TPC-C uses.</summary>
[GenerateSerializer]
public sealed class MutableOrderPartition
{
    [Id(0)] public List<OrderRecord> Orders { get; set; } = [];
}

/// <summary>
/// An ACT writes to a private copy of the actor state. For an insert-only table of 10,000 orders that copy is a
/// full walk with a mutable list, and a shared reference with an immutable list whose items are immutable.
/// </summary>
[MemoryDiagnoser]
public class CopyBenchmarks
{
    private const int Orders = 10_000;
    private DeepCopier _copier = null!;
    private TpccPartition _immutable = null!;
    private MutableOrderPartition _mutable = null!;

    [GlobalSetup]
    public void Setup()
    {
        _copier = new ServiceCollection().AddSerializer().BuildServiceProvider().GetRequiredService<DeepCopier>();
        var orders = Enumerable.Range(1, Orders)
            .Select(id => new OrderRecord(id, id % 3_000, true, [.. Enumerable.Range(1, 10).Select(i => new OrderLine(i, 1, 5, 500))]))
            .ToList();
        _immutable = new TpccPartition { Orders = [.. orders] };
        _mutable = new MutableOrderPartition { Orders = orders };
    }

    [Benchmark(Baseline = true)]
    public TpccPartition ImmutableOrders() => _copier.Copy(_immutable);

    [Benchmark]
    public MutableOrderPartition MutableOrders() => _copier.Copy(_mutable);
}
