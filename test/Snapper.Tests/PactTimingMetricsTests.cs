using System.Diagnostics;
using System.Diagnostics.Metrics;
using Microsoft.Extensions.DependencyInjection;
using Orleans.TestingHost;
using Snapper.Hosting;
using Snapper.Tests.Actors;
using Xunit;

namespace Snapper.Tests;

/// <summary>
/// The silo meter's account of where a PACT's time goes: waiting for the token (submission to emission), its batch's
/// execution (emission until the last actor finished) and the batch's commit lag (emission to commit). A silo of its
/// own, so that the one PACT of the test is the only one measured; the waits are stretched by a hook and a gate, so the
/// recorded values have lower bounds, timed by the test, that hold however fast or slow the machine is.
/// </summary>
public sealed class PactTimingMetricsTests : IAsyncLifetime
{
    private static readonly TimeSpan Stretch = TimeSpan.FromMilliseconds(50);
    private readonly SnapperTestHooks _hooks = new();
    private InProcessTestCluster _cluster = null!;

    public async Task InitializeAsync() => _cluster = await ClusterFixture.StartAsync(_ => { }, _hooks);

    public Task DisposeAsync() => _cluster.DisposeAsync().AsTask();

    private IProbe Probe(long id) => _cluster.Client.GetGrain<IProbe>(id);

    [Fact]
    public async Task A_pacts_token_wait_execution_and_commit_lag_are_measured_on_the_silo_meter()
    {
        using var timings = new PactTimings(_cluster.GetSiloServiceProvider().GetRequiredService<IMeterFactory>());
        var id = ClusterFixture.NewId();
        var gate = $"timed-pact-{id}";

        // Held on the token before it is emitted, then held in its method after emission. Each hold is timed where it
        // surely lies inside the interval measured (timers may fire a little early, so their nominal length is not used).
        var heldOnToken = TimeSpan.Zero;
        _hooks.BeforePactOrdered = _ =>
        {
            var clock = Stopwatch.StartNew();
            Thread.Sleep(Stretch);
            heldOnToken = clock.Elapsed;
        };
        TimeSpan heldInMethod;
        try
        {
            var running = Probe(id).StartTxn(Probe(id).Hold, new Hold(gate, AccessMode.ReadWrite), ActorAccessInfo.Of(Probe(id)));
            await Gates.WhenReached(gate); // emitted before its method reached the gate
            var clock = Stopwatch.StartNew();
            await Task.Delay(Stretch);
            heldInMethod = clock.Elapsed;
            Gates.Release(gate); // its batch completes only after this
            await running.WaitAsync(TimeSpan.FromSeconds(30));
        }
        finally
        {
            _hooks.BeforePactOrdered = null;
            Gates.Release(gate);
        }

        var waited = Assert.Single(timings.Values("snapper.pact.ordering_wait"));
        var executed = Assert.Single(timings.Values("snapper.pact.batch.execution"));
        var lag = Assert.Single(timings.Values("snapper.pact.batch.commit_lag"));
        Assert.True(heldOnToken > TimeSpan.Zero && waited >= heldOnToken.TotalMilliseconds, $"token wait {waited} ms, held {heldOnToken.TotalMilliseconds} ms before emission");
        Assert.True(executed >= heldInMethod.TotalMilliseconds, $"execution {executed} ms, held {heldInMethod.TotalMilliseconds} ms in its method");
        Assert.True(lag >= heldInMethod.TotalMilliseconds, $"commit lag {lag} ms, held {heldInMethod.TotalMilliseconds} ms in its method");
    }

    /// <summary>The values of the PACT timing histograms of one silo (its meter factory is the meter's scope).</summary>
    private sealed class PactTimings : IDisposable
    {
        private readonly MeterListener _listener = new();
        private readonly Dictionary<string, List<double>> _values = new();

        public PactTimings(IMeterFactory silo)
        {
            _listener.InstrumentPublished = (instrument, listener) =>
            {
                if (instrument.Meter.Scope == silo && instrument.Meter.Name == "Snapper" && instrument.Name.StartsWith("snapper.pact.", StringComparison.Ordinal))
                {
                    listener.EnableMeasurementEvents(instrument);
                }
            };
            _listener.SetMeasurementEventCallback<double>((instrument, milliseconds, _, _) =>
            {
                lock (_values)
                {
                    (_values.TryGetValue(instrument.Name, out var list) ? list : _values[instrument.Name] = new()).Add(milliseconds);
                }
            });
            _listener.Start();
        }

        public List<double> Values(string histogram)
        {
            lock (_values)
            {
                return [.. _values.GetValueOrDefault(histogram) ?? []];
            }
        }

        public void Dispose() => _listener.Dispose();
    }
}
