using Orleans.TestingHost;
using Snapper.Hosting;
using Snapper.Logging;
using Snapper.Tests.Actors;
using Xunit;

namespace Snapper.Tests.Durability;

/// <summary>
/// The hybrid commit rule with a log: an ACT that read a batch's uncommitted writes on this silo commits once the
/// batch's commit record is queued on the ordered logger, ahead of its own, and not only once that record is durable and
/// applied. The disk is held (a test hook blocks the logger before its fsync) so the order of events is forced, not timed.
/// </summary>
public sealed class ActAfterQueuedBatchTests : IDisposable
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(30);
    private readonly TemporaryFolder _data = new();

    public void Dispose() => _data.Dispose();

    private Task<InProcessTestCluster> StartAsync(SnapperTestHooks? hooks = null) => ClusterFixture.StartAsync(o =>
    {
        ClusterFixture.UseLongBounds(o);
        o.HybridWaitTimeout = TimeSpan.FromMinutes(1);
        o.LogWriteTimeout = TimeSpan.FromMinutes(1);
        o.DataFolder = _data.Path;
        o.CheckpointInterval = TimeSpan.Zero;
    }, hooks);

    [Fact]
    public async Task An_act_over_a_batch_whose_commit_record_is_queued_releases_its_locks_before_the_disk_and_keeps_its_state()
    {
        var hooks = new SnapperTestHooks();
        using var disk = new ManualResetEventSlim(false);
        var ids = ClusterFixture.NewIds(2);
        await using (var cluster = await StartAsync(hooks))
        {
            // A failing assertion must not leave the logger blocked: the silo could not stop.
            using var release = new DiskRelease(hooks, disk);
            var grains = cluster.Client;
            IProbe Probe(long id) => grains.GetGrain<IProbe>(id);

            // A batch wrote ids[1] (1, completed there) and holds on ids[0]; an ACT runs over it on ids[1] (2) and, at
            // its commit, waits for the batch.
            var batchGate = $"queued-batch-{ids[0]}";
            var batch = Probe(ids[0]).StartTxn(Probe(ids[0]).CallThenHold, new CallThenHold(ids[1], batchGate), ActorAccessInfo.Of(Probe(ids[0]), Probe(ids[1])));
            await Gates.WhenReached(batchGate);
            var act = Probe(ids[1]).StartTxn(Probe(ids[1]).Touch, AccessMode.ReadWrite);

            // The disk stalls on the batch's commit record, the first commit record of this silo: written to the file,
            // not yet fsynced. The batch then completes on ids[0], which queues that record.
            var stalled = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            hooks.AfterLogWrite = payloads =>
            {
                if (payloads.Any(p => (LogRecordType)p[0] is LogRecordType.Committed))
                {
                    stalled.TrySetResult();
                    disk.Wait();
                }
            };
            Gates.Release(batchGate);
            await stalled.Task.WaitAsync(Bound);

            // A PACT on ids[1] runs there (3) while the disk is still held: the ACT ended there, its lock released, with
            // neither commit record durable. (Waiting for the batch to be durable, it would still hold ids[1].)
            var afterGate = $"queued-after-{ids[0]}";
            var after = Probe(ids[1]).StartTxn(Probe(ids[1]).Hold, new Hold(afterGate, AccessMode.ReadWrite), ActorAccessInfo.Of(Probe(ids[1])));
            await Gates.WhenReached(afterGate);
            Assert.False(act.IsCompleted, "the ACT's client heard before its commit record could be durable");
            Assert.False(batch.IsCompleted, "the batch's client heard before its commit record could be durable");

            // The disk comes back: both commit. The batch's commit, applied after the ACT installed, leaves the ACT's
            // state standing as the committed one (what a deactivation persists), not the older state of the batch.
            release.Dispose();
            await Task.WhenAll(batch, act).WaitAsync(Bound);
            Assert.Equal(2, await grains.GetGrain<IProbeInspection>(ids[1]).CommittedValue());

            Gates.Release(afterGate);
            await after.WaitAsync(Bound);
            Assert.Equal(3, await grains.GetGrain<IProbeInspection>(ids[1]).CommittedValue());
        }

        // The log holds all three in order: recovery brings back the last.
        await using (var restarted = await StartAsync())
        {
            var probe = restarted.Client.GetGrain<IProbe>(ids[1]);
            Assert.Equal(3, await probe.StartTxn(probe.Read, 0));
            var root = restarted.Client.GetGrain<IProbe>(ids[0]);
            Assert.Equal(1, await root.StartTxn(root.Read, 0));
        }
    }

    /// <summary>Lets the held disk go on: no more stalls, and the stalled write proceeds.</summary>
    private sealed class DiskRelease(SnapperTestHooks hooks, ManualResetEventSlim disk) : IDisposable
    {
        public void Dispose()
        {
            hooks.AfterLogWrite = null;
            disk.Set();
        }
    }
}
