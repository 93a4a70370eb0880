using BenchmarkDotNet.Attributes;
using MathNet.Numerics.Distributions;
using Snapper.Workloads;

namespace Snapper.Benchmarks.Micro;

/// <summary>
/// One skewed key draw at 10,000 actors: the runner's table lookup against MathNet's own sampler, whose cost
/// grows with the number of actors and would make the load generator the bottleneck.
/// </summary>
public class SamplerBenchmarks
{
    private const int Actors = 10_000;
    private const double Skew = 1.25;
    private readonly KeySampler _table = KeySampler.Zipf(Actors, Skew);
    private readonly Zipf _mathNet = new(Skew, Actors, new Random(1));
    private readonly Random _random = new(1);

    [Benchmark(Baseline = true)]
    public int TableLookup() => _table.Next(_random);

    [Benchmark]
    public int MathNetSample() => _mathNet.Sample();
}
