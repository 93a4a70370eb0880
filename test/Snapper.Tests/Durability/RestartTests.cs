using Orleans.TestingHost;
using Snapper.Tests.Actors;
using Xunit;

namespace Snapper.Tests.Durability;

/// <summary>
/// The write-ahead log through the public API: a silo stopped and started again on the same data folder brings
/// back every committed ACT and PACT and nothing of an aborted one.
/// </summary>
public sealed class RestartTests : IDisposable
{
    private readonly TemporaryFolder _data = new();

    public void Dispose() => _data.Dispose();

    private Task<InProcessTestCluster> StartAsync(TimeSpan? checkpointInterval = null, int loggers = 1) => ClusterFixture.StartAsync(o =>
    {
        o.DataFolder = _data.Path;
        o.Loggers = loggers;
        o.CheckpointInterval = checkpointInterval ?? o.CheckpointInterval;
    });

    private static IBankAccount Account(IGrainFactory grains, long id) => grains.GetGrain<IBankAccount>(id);

    private static ActorAccessInfo Declare(IGrainFactory grains, params long[] ids) =>
        ActorAccessInfo.Of([.. ids.Select(id => (IAddressable)Account(grains, id))]);

    [Theory]
    [InlineData(0, 1)]  // no checkpoints: recovery replays the whole log
    [InlineData(20, 1)] // checkpoints while transactions run: recovery starts from the newest one
    [InlineData(20, 3)] // several loggers: states made durable on each actor's logger before it votes
    public async Task Committed_acts_and_pacts_survive_a_restart_and_aborted_ones_leave_nothing(int checkpointMilliseconds, int loggers)
    {
        var interval = TimeSpan.FromMilliseconds(checkpointMilliseconds);
        long[] ids = [1, 2, 3, 4];
        AccountState[] before;
        await using (var cluster = await StartAsync(interval, loggers))
        {
            var grains = cluster.Client;
            foreach (var id in ids)
            {
                await Account(grains, id).StartTxn(Account(grains, id).Reset, 100m);
            }

            await Account(grains, 1).StartTxn(Account(grains, 1).Transfer, new Transfer(11, 2, 30m));                      // ACT
            await Account(grains, 2).StartTxn(Account(grains, 2).Transfer, new Transfer(12, 3, 50m), Declare(grains, 2, 3)); // PACT
            await Account(grains, 3).StartTxn(Account(grains, 3).MultiTransfer, new MultiTransfer(13, [1, 4], 10m), Declare(grains, 3, 1, 4));
            await Assert.ThrowsAsync<TransactionAbortedException>(() =>                                                        // aborted ACT
                Account(grains, 4).StartTxn(Account(grains, 4).Transfer, new Transfer(14, 1, 1_000m)));
            await Assert.ThrowsAsync<TransactionAbortedException>(() =>                                                        // aborted PACT
                Account(grains, 1).StartTxn(Account(grains, 1).Transfer, new Transfer(15, 2, 1_000m), Declare(grains, 1, 2)));
            before = await Account(grains, 1).StartTxn(Account(grains, 1).ReadAll, ids);
        }

        Assert.Equal([80m, 80m, 130m, 110m], before.Select(s => s.Balance));
        await using (var restarted = await StartAsync(interval))
        {
            var after = await Account(restarted.Client, 1).StartTxn(Account(restarted.Client, 1).ReadAll, ids);

            Assert.Equal(before.Select(s => s.Balance), after.Select(s => s.Balance));
            Assert.Equal(before.Select(s => string.Join(",", s.Applied)), after.Select(s => string.Join(",", s.Applied)));

            // And the recovered silo keeps working on the recovered state.
            await Account(restarted.Client, 4).StartTxn(Account(restarted.Client, 4).Transfer, new Transfer(16, 1, 10m), Declare(restarted.Client, 4, 1));
            var moved = await Account(restarted.Client, 1).StartTxn(Account(restarted.Client, 1).ReadAll, new long[] { 1, 4 });
            Assert.Equal([90m, 100m], moved.Select(s => s.Balance));
        }

        // A second restart recovers what the first recovered silo committed (with checkpoints: from the checkpoint
        // that recovery itself ended with, plus the log after it).
        await using (var again = await StartAsync(interval))
        {
            var after = await Account(again.Client, 1).StartTxn(Account(again.Client, 1).ReadAll, ids);
            Assert.Equal([90m, 80m, 130m, 100m], after.Select(s => s.Balance));
        }

        Assert.Equal(checkpointMilliseconds > 0, Directory.GetFiles(_data.Path, "checkpoint-*.ckpt").Length > 0);
    }

    [Fact]
    public async Task A_second_silo_on_the_same_data_folder_is_refused()
    {
        await using var first = await StartAsync();

        var refused = await Assert.ThrowsAnyAsync<Exception>(() => StartAsync());

        Assert.Contains("in use by another silo", Flatten(refused));
    }

    private static string Flatten(Exception exception) =>
        exception is AggregateException aggregate
            ? string.Join(" | ", aggregate.Flatten().InnerExceptions.Select(Flatten))
            : exception.Message + (exception.InnerException is { } inner ? " | " + Flatten(inner) : "");
}
