using BenchmarkDotNet.Attributes;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using Snapper.Act;
using Snapper.Diagnostics;
using Snapper.Hosting;

namespace Snapper.Benchmarks.Micro;

/// <summary>
/// What an ACT participant pays the silo's participant watchdog: joining its list when an ACT begins there and leaving
/// it when the ACT ends, with <see cref="InFlight"/> other actors on the list. This replaced a grain timer started by
/// every actor an ACT reached (and stopped at its first idle tick).
/// </summary>
[MemoryDiagnoser]
public class ParticipantWatchdogBenchmarks
{
    private ParticipantWatchdog _watchdog = null!;
    private readonly Activation _participant = new();

    [Params(0, 64)]
    public int InFlight { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        // Bounds of an hour: no round runs while the benchmark does.
        var options = new SnapperOptions { ParticipantTimeout = TimeSpan.FromHours(2), DecisionTimeout = TimeSpan.FromHours(1) };
        _watchdog = new ParticipantWatchdog(Options.Create(options), new SnapperMetrics(), NullLogger<ParticipantWatchdog>.Instance, TimeProvider.System);
        for (var i = 0; i < InFlight; i++)
        {
            _watchdog.Add(new Activation());
        }
    }

    [GlobalCleanup]
    public void Cleanup() => _watchdog.Dispose();

    [Benchmark]
    public void JoinAndLeave()
    {
        _watchdog.Add(_participant);
        _watchdog.Remove(_participant);
    }

    private sealed class Activation : IWatchedActivation
    {
        public void QueueWatch()
        {
        }
    }
}
