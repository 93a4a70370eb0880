using System.Net;
using BenchmarkDotNet.Attributes;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using Snapper.Actors;
using Snapper.Hosting;

namespace Snapper.Benchmarks.Micro;

/// <summary>
/// What an actor pays to admit one of Snapper's internal calls (each call inside a transaction and each 2PC message) by
/// its silo's key, the check that replaced a call filter on every actor: the stamp a silo puts on its calls, and its
/// check on the receiving side for the same silo.
/// </summary>
[MemoryDiagnoser]
public class SiloCallKeyBenchmarks
{
    private readonly SiloCallKeys _keys = new(new LocalSilo(), grains: null!, Options.Create(new SnapperOptions()), NullLogger<SiloCallKeys>.Instance);
    private SiloStamp _own;

    [GlobalSetup]
    public void Setup() => _own = _keys.Own;

    [Benchmark]
    public bool Stamp() => _keys.Own.Key != Guid.Empty;

    [Benchmark]
    public bool AdmitOwnSilo() => _keys.VerifyAsync(_own, "ExecuteCall").IsCompletedSuccessfully;

    private sealed class LocalSilo : ILocalSiloDetails
    {
        public string Name => "bench";

        public string ClusterId => "bench";

        public string DnsHostName => "localhost";

        public SiloAddress SiloAddress { get; } = SiloAddress.New(IPAddress.Loopback, 11111, 1);

        public SiloAddress GatewayAddress => SiloAddress;
    }
}
