using System.Diagnostics.Metrics;
using Microsoft.Extensions.DependencyInjection;
using Orleans.TestingHost;
using Snapper.Tests.Actors;
using Xunit;

namespace Snapper.Tests;

/// <summary>
/// The silo meter's account of where hybrid transactions wait for each other: sub-batches behind ACTs, ACTs behind
/// batches, ACTs for the batches they read from to commit. A silo of its own, whose ACTs wait for batches as long as a
/// test needs (the default gives way after 1 ms).
/// </summary>
public sealed class HybridWaitMetricsTests : IAsyncLifetime
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(10);
    private InProcessTestCluster _cluster = null!;

    // Long bounds too: the batch and the ACTs are held across several staged steps and must end by the steps, not a bound.
    public async Task InitializeAsync() => _cluster = await ClusterFixture.StartAsync(o =>
    {
        ClusterFixture.UseLongBounds(o);
        o.HybridWaitTimeout = TimeSpan.FromMinutes(1);
    });

    public Task DisposeAsync() => _cluster.DisposeAsync().AsTask();

    private IProbe Probe(long id) => _cluster.Client.GetGrain<IProbe>(id);

    [Fact]
    public async Task The_waits_between_batches_and_acts_are_measured_on_the_silo_meter()
    {
        using var waits = new HybridWaitCounter(_cluster.GetSiloServiceProvider().GetRequiredService<IMeterFactory>());
        var ids = ClusterFixture.NewIds(3);
        var batchGate = $"measured-batch-{ids[0]}";
        var actGate = $"measured-act-{ids[0]}";

        // A batch wrote ids[1] (completed there) and holds on ids[0]: an ACT on ids[0] waits for it to complete there.
        var before = Probe(ids[0]).StartTxn(Probe(ids[0]).CallThenHold, new CallThenHold(ids[1], batchGate), ActorAccessInfo.Of(Probe(ids[0]), Probe(ids[1])));
        await Gates.WhenReached(batchGate);
        var entering = Probe(ids[0]).StartTxn(Probe(ids[0]).Touch, AccessMode.ReadWrite);
        await Staged.Until(() => waits.Waiting("snapper.hybrid.act.waiting_for_batches") == 1, "the ACT on ids[0] waits behind the batch");

        // Another ACT runs on ids[1] over the completed batch and holds; a PACT emitted now waits there behind it.
        var act = Probe(ids[1]).StartTxn(Probe(ids[1]).Hold, new Hold(actGate, AccessMode.ReadWrite));
        await Gates.WhenReached(actGate);
        var afterGate = $"measured-after-{ids[0]}";
        var after = Probe(ids[2]).StartTxn(Probe(ids[2]).ReachThenRead, new ReachThenRead(afterGate, ids[1]), ActorAccessInfo.Of(Probe(ids[2]), Probe(ids[1])));
        await Gates.WhenReached(afterGate); // emitted: its sub-batch on ids[1] is placed after the ACT there
        Gates.Release(afterGate);

        // The ACT on ids[1] then waits, locks held, for the batch it read from to commit. Once the batch ends on ids[0]
        // (the first ACT enters) and commits, the ACT on ids[1] commits and the PACT behind it starts.
        Gates.Release(actGate);
        await Staged.Until(() => waits.Waiting("snapper.hybrid.act.waiting_for_commits") == 1, "the ACT on ids[1] waits for the batch to commit");
        Gates.Release(batchGate);
        await Task.WhenAll(before, act, entering).WaitAsync(Bound);
        Assert.Equal(2, await after.WaitAsync(Bound));
        Assert.Equal(0, waits.Waiting("snapper.hybrid.act.waiting_for_batches"));
        Assert.Equal(0, waits.Waiting("snapper.hybrid.act.waiting_for_commits"));

        var counts = waits.Counts();
        Assert.True(counts.GetValueOrDefault("snapper.hybrid.act.wait_for_batches") >= 1, "no ACT wait behind a batch was recorded");
        Assert.True(counts.GetValueOrDefault("snapper.hybrid.act.wait_for_commits") >= 1, "no ACT wait for a batch commit was recorded");
        Assert.True(counts.GetValueOrDefault("snapper.hybrid.batch.wait_for_acts") >= 1, "no sub-batch wait behind an ACT was recorded");
    }

    /// <summary>
    /// Counts the hybrid wait histograms' recordings of one silo (its meter factory is the meter's scope), and sums its
    /// gauges of waiting ACTs from the moment it listens.
    /// </summary>
    private sealed class HybridWaitCounter : IDisposable
    {
        private readonly MeterListener _listener = new();
        private readonly Dictionary<string, int> _counts = new();
        private readonly Dictionary<string, long> _waiting = new();

        public HybridWaitCounter(IMeterFactory silo)
        {
            _listener.InstrumentPublished = (instrument, listener) =>
            {
                if (instrument.Meter.Scope == silo && instrument.Meter.Name == "Snapper" && instrument.Name.StartsWith("snapper.hybrid.", StringComparison.Ordinal))
                {
                    listener.EnableMeasurementEvents(instrument);
                }
            };
            _listener.SetMeasurementEventCallback<double>((instrument, milliseconds, _, _) =>
            {
                Assert.True(milliseconds >= 0);
                lock (_counts)
                {
                    _counts[instrument.Name] = _counts.GetValueOrDefault(instrument.Name) + 1;
                }
            });
            _listener.SetMeasurementEventCallback<long>((instrument, change, _, _) =>
            {
                lock (_counts)
                {
                    _waiting[instrument.Name] = _waiting.GetValueOrDefault(instrument.Name) + change;
                }
            });
            _listener.Start();
        }

        public long Waiting(string gauge)
        {
            lock (_counts)
            {
                return _waiting.GetValueOrDefault(gauge);
            }
        }

        public Dictionary<string, int> Counts()
        {
            lock (_counts)
            {
                return new(_counts);
            }
        }

        public void Dispose() => _listener.Dispose();
    }
}
