using BenchmarkDotNet.Attributes;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Snapper.Hosting;
using Snapper.Workloads.SmallBank;

namespace Snapper.Benchmarks.Micro;

/// <summary>
/// One SmallBank MultiTransfer at a time (a first actor calling four others) on an embedded silo without a log, with the
/// calls between actors, and an ACT's prepares and commits, run as turns on the callee's scheduler
/// (<see cref="SnapperOptions.LocalCalls"/>) and as Orleans messages. Nothing else runs, so this is a transaction's latency
/// and allocation with one in flight; the runner measures the throughput under load.
/// </summary>
[MemoryDiagnoser]
public class LocalCallBenchmarks
{
    private const int Accounts = 5;
    private IHost _silo = null!;
    private ISnapperAccount _first = null!;
    private MultiTransferInput _transfer = null!;
    private ActorAccessInfo _accesses = null!;

    [Params(true, false)]
    public bool LocalCalls { get; set; }

    [GlobalSetup]
    public async Task Setup()
    {
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.UseOrleans(silo => silo.UseLocalhostClustering().AddSnapper(options => options.LocalCalls = LocalCalls));
        _silo = builder.Build();
        await _silo.StartAsync();

        var grains = _silo.Services.GetRequiredService<IGrainFactory>();
        var accounts = Enumerable.Range(0, Accounts).Select(id => grains.GetGrain<ISnapperAccount>(id)).ToArray();
        foreach (var account in accounts)
        {
            await account.StartTxn(account.Init, 1_000_000L);
        }

        _first = accounts[0];
        _transfer = new MultiTransferInput([.. Enumerable.Range(1, Accounts - 1).Select(id => (long)id)], 1);
        _accesses = ActorAccessInfo.Of([.. accounts]);
    }

    [GlobalCleanup]
    public async Task Cleanup()
    {
        await _silo.StopAsync();
        _silo.Dispose();
    }

    [Benchmark]
    public Task Act() => _first.StartTxn(_first.MultiTransfer, _transfer);

    [Benchmark]
    public Task Pact() => _first.StartTxn(_first.MultiTransfer, _transfer, _accesses);
}
