using BenchmarkDotNet.Attributes;
using Microsoft.Extensions.DependencyInjection;
using Orleans.Serialization;
using Snapper.KeyValue;
using Snapper.Logging;

namespace Snapper.Benchmarks.Micro;

/// <summary>An account of a key-value actor: a balance and an owner name, about what SmallBank keeps per account.</summary>
[GenerateSerializer, Immutable]
public sealed record AccountRow([property: Id(0)] decimal Balance, [property: Id(1)] string Owner);

/// <summary>
/// What a key-value actor logs for a transaction that changed <see cref="Changed"/> of its <see cref="Keys"/> keys
/// (thesis §5.3.3.2, the MultiTransfer of Fig. 5.7: 4 keys per actor): the whole state, as an opaque actor logs it
/// ("snapshot"), against the change record of those keys ("incremental"). The log's fold of that change record onto a
/// checkpoint image is measured too (what recovery and checkpoints pay per record).
/// </summary>
[MemoryDiagnoser]
public class KeyValueLoggingBenchmarks
{
    private Serializer _serializer = null!;
    private KeyValueState<long, AccountRow> _committed = null!;
    private KeyValueState<long, AccountRow> _version = null!;
    private byte[] _image = null!;
    private byte[] _changes = null!;

    [Params(100, 1000)]
    public int Keys { get; set; }

    public int Changed => 4;

    [GlobalSetup]
    public void Setup()
    {
        var services = new ServiceCollection().AddSerializer().BuildServiceProvider();
        _serializer = services.GetRequiredService<Serializer>();
        _committed = KeyValueState<long, AccountRow>.Empty();
        foreach (var key in Enumerable.Range(0, Keys))
        {
            _committed.Set(key, new AccountRow(1_000m + key, $"customer-{key}"));
        }

        _image = KeyedEntries.Apply(null, [((IIncrementallyLogged)_committed).EncodeForLog(_serializer)]);
        _version = (KeyValueState<long, AccountRow>)((IIncrementallyLogged)_committed).NewVersion();
        foreach (var key in Enumerable.Range(0, Changed))
        {
            _version.Set(key * (Keys / Changed), new AccountRow(5m, "changed"));
        }

        _changes = ((IIncrementallyLogged)_version).EncodeForLog(_serializer);
        Console.WriteLine($"// {Keys} keys: snapshot {_serializer.SerializeToArray<object>(_version).Length} bytes, incremental {_changes.Length} bytes");
    }

    [Benchmark(Baseline = true)]
    public byte[] Snapshot() => _serializer.SerializeToArray<object>(_version);

    [Benchmark]
    public byte[] Incremental() => ((IIncrementallyLogged)_version).EncodeForLog(_serializer);

    [Benchmark]
    public byte[] FoldOntoImage() => KeyedEntries.Apply(_image, [_changes]);
}
