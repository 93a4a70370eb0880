using Orleans.TestingHost;
using Snapper.Logging;
using Snapper.Tests.Actors;
using Xunit;

namespace Snapper.Tests.Durability;

/// <summary>
/// <see cref="LogFolderDump"/>: a data folder read without changing it, record by record, as an operator tracing a
/// failure reads it.
/// </summary>
public sealed class LogFolderDumpTests : IDisposable
{
    private readonly TemporaryFolder _data = new();

    public void Dispose() => _data.Dispose();

    private static IBankAccount Account(IGrainFactory grains, long id) => grains.GetGrain<IBankAccount>(id);

    /// <summary>Two accounts reset by ACTs, a committed PACT between them, an aborted ACT; the silo is stopped after.</summary>
    private async Task<(string First, string Second)> RunTransactionsAsync(TimeSpan checkpointInterval)
    {
        await using var cluster = await ClusterFixture.StartAsync(o =>
        {
            o.DataFolder = _data.Path;
            o.CheckpointInterval = checkpointInterval;
        });
        var grains = cluster.Client;
        var (first, second) = (Account(grains, 1), Account(grains, 2));
        await first.StartTxn(first.Reset, 100m);
        await second.StartTxn(second.Reset, 100m);
        await second.StartTxn(second.Transfer, new Transfer(21, 1, 30m), ActorAccessInfo.Of(second, first));
        await Assert.ThrowsAsync<TransactionAbortedException>(() => first.StartTxn(first.Transfer, new Transfer(22, 2, 1_000m)));
        if (checkpointInterval > TimeSpan.Zero)
        {
            await Staged.Until(() => Directory.GetFiles(_data.Path, "checkpoint-*.ckpt").Length > 0, "no checkpoint was taken", TimeSpan.FromSeconds(30));
        }

        return (first.GetGrainId().ToString(), second.GetGrainId().ToString());
    }

    [Fact]
    public async Task Every_state_record_and_decision_of_an_actor_is_listed_in_written_order()
    {
        var (first, second) = await RunTransactionsAsync(TimeSpan.Zero);

        var dump = LogFolderDump.Read(_data.Path);

        Assert.Empty(dump.Damage);
        Assert.Empty(dump.Checkpoints);
        var decided = dump.Records.Where(r => r.Actor is null).ToLookup(r => (r.Kind, r.Id), r => r.Type);
        foreach (var actor in new[] { first, second })
        {
            // Two committed versions each: the ACT's reset, then the PACT's transfer, the later one with the larger seq.
            var versions = dump.Records.Where(r => r.Actor == actor && decided[(r.Kind, r.Id)].Any(t => t.StartsWith("Committed", StringComparison.Ordinal))).ToArray();
            Assert.Equal(["Act", "Batch"], versions.Select(v => v.Kind));
            Assert.True(versions[0].Seq < versions[1].Seq, $"{actor}: seq {versions[0].Seq} then {versions[1].Seq}");
            Assert.All(versions, v => Assert.NotEmpty(v.State!));
        }

        // The PACT is one batch, which wrote both actors and committed once.
        var batch = Assert.Single(dump.Records, r => r.Kind == "Batch" && r.Actor == second).Id;
        Assert.Equal(2, dump.Records.Count(r => r.Kind == "Batch" && r.Id == batch && r.Actor is not null));
        Assert.Single(dump.Records, r => r.Kind == "Batch" && r.Id == batch && r.Actor is null && r.Type == "Committed");
        Assert.All(dump.Records.GroupBy(r => r.Segment), segment => Assert.Equal(Enumerable.Range(0, segment.Count()), segment.Select(r => r.Index)));
    }

    [Fact]
    public async Task A_checkpoint_lists_each_actors_committed_state()
    {
        var (first, second) = await RunTransactionsAsync(TimeSpan.FromMilliseconds(20));

        var dump = LogFolderDump.Read(_data.Path);

        Assert.Empty(dump.Damage);
        var checkpoint = Assert.IsType<LogDumpCheckpoint>(dump.Checkpoints.LastOrDefault()); // a silo keeps its newest one
        Assert.NotEmpty(checkpoint.Cut);
        foreach (var actor in new[] { first, second })
        {
            // The actor's state is in the checkpoint, or in a committed record of the segments above its cut.
            var inCheckpoint = checkpoint.Actors.SingleOrDefault(a => a.Actor == actor);
            var inSegments = dump.Records.Where(r => r.Actor == actor).Select(r => r.Seq).DefaultIfEmpty(-1).Max();
            Assert.True(inCheckpoint?.State is not null || inSegments > 0, $"{actor} is neither in the checkpoint nor in the log after it");
        }
    }

    [Fact]
    public async Task A_torn_tail_is_reported_and_left_as_it_is()
    {
        await RunTransactionsAsync(TimeSpan.Zero);
        var segment = Directory.GetFiles(_data.Path, "*.wal", SearchOption.AllDirectories).Order(StringComparer.Ordinal).Last();
        var intact = LogFolderDump.Read(_data.Path).Records.Count;
        await using (var file = new FileStream(segment, FileMode.Append, FileAccess.Write))
        {
            file.Write([0x30, 0, 0, 0, 0xAB, 0xCD]); // a frame's length and the first bytes of its checksum: a write cut short
        }

        var length = new FileInfo(segment).Length;

        var dump = LogFolderDump.Read(_data.Path);

        Assert.Equal(intact, dump.Records.Count);
        var damage = Assert.Single(dump.Damage);
        Assert.Equal(Path.GetRelativePath(_data.Path, segment), damage.File);
        Assert.DoesNotContain("Recovery", damage.Problem, StringComparison.Ordinal); // what is wrong, not what recovery does about it
        Assert.Equal(length, new FileInfo(segment).Length); // recovery would cut it off; reading leaves it
    }

    [Fact]
    public void A_folder_that_does_not_exist_is_refused()
    {
        var missing = Path.Combine(_data.Path, "nothing-here");

        Assert.Throws<DirectoryNotFoundException>(() => LogFolderDump.Read(missing));
        Assert.False(Directory.Exists(missing));
    }
}
