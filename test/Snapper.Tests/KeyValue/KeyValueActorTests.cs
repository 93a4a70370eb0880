using Snapper.Tests.Actors;
using Xunit;

namespace Snapper.Tests.KeyValue;

/// <summary>Key-value actors (SnapperX's DictionaryState, thesis §5.2-5.3) through the public API, under ACTs and PACTs.</summary>
[Collection(ClusterCollection.Name)]
public sealed class KeyValueActorTests(ClusterFixture fixture)
{
    private IShelf Shelf(long id) => fixture.Client.GetGrain<IShelf>(id);

    private Task<Dictionary<string, int>> AllOf(long id) => Shelf(id).StartTxn(Shelf(id).All, 0);

    [Fact]
    public async Task Keys_are_put_read_enumerated_and_deleted_by_acts_and_pacts()
    {
        var id = ClusterFixture.NewId();
        var shelf = Shelf(id);
        await shelf.StartTxn(shelf.Stock, new Dictionary<string, int> { ["apple"] = 3, ["pear"] = 5 });
        await shelf.StartTxn(shelf.Stock, new Dictionary<string, int> { ["plum"] = 7 }, ActorAccessInfo.Of(shelf));

        Assert.Equal(5, await shelf.StartTxn(shelf.Count, "pear"));
        Assert.Equal(7, await shelf.StartTxn(shelf.Count, "plum", ActorAccessInfo.Of(shelf)));
        Assert.Null(await shelf.StartTxn(shelf.Count, "fig"));
        Assert.True(await shelf.StartTxn(shelf.Remove, "apple", ActorAccessInfo.Of(shelf)));
        Assert.False(await shelf.StartTxn(shelf.Remove, "apple"));
        Assert.Equal(new Dictionary<string, int> { ["pear"] = 5, ["plum"] = 7 }, await AllOf(id));
    }

    [Fact]
    public async Task Every_GetState_of_a_transaction_returns_its_one_view_extended_by_the_keys_named()
    {
        var id = ClusterFixture.NewId();
        var shelf = Shelf(id);
        await shelf.StartTxn(shelf.Stock, new Dictionary<string, int> { ["a"] = 4 });

        Assert.True(await shelf.StartTxn(shelf.ExtendAccess, new[] { "a", "b" }));
        Assert.True(await shelf.StartTxn(shelf.ExtendAccess, new[] { "a", "c" }, ActorAccessInfo.Of(shelf)));
        Assert.Equal(new Dictionary<string, int> { ["a"] = 4, ["b"] = 4, ["c"] = 4 }, await AllOf(id));
    }

    public static TheoryData<string, bool> Misuses => new()
    {
        { nameof(IShelf.ReadWithoutAcquiring), false },
        { nameof(IShelf.ReadWithoutAcquiring), true },
        { nameof(IShelf.WriteAfterAcquiringForReading), false },
        { nameof(IShelf.WriteAfterAcquiringForReading), true },
        { nameof(IShelf.EnumerateWithoutTheCollection), false },
    };

    [Theory]
    [MemberData(nameof(Misuses))]
    public async Task Using_a_key_not_acquired_aborts_with_a_typed_error_and_leaves_nothing(string misuse, bool pact)
    {
        var id = ClusterFixture.NewId();
        var shelf = Shelf(id);
        await shelf.StartTxn(shelf.Stock, new Dictionary<string, int> { ["kept"] = 1 });
        Func<TxnContext, string, Task> method = misuse switch
        {
            nameof(IShelf.ReadWithoutAcquiring) => shelf.ReadWithoutAcquiring,
            nameof(IShelf.WriteAfterAcquiringForReading) => shelf.WriteAfterAcquiringForReading,
            _ => shelf.EnumerateWithoutTheCollection,
        };

        var abort = await Assert.ThrowsAsync<TransactionAbortedException>(() =>
            pact ? shelf.StartTxn(method, "kept", ActorAccessInfo.Of(shelf)) : shelf.StartTxn(method, "kept"));
        Assert.Equal(AbortReason.InvalidCall, abort.Reason);
        Assert.Contains("Key '", abort.Message);
        Assert.Equal(new Dictionary<string, int> { ["kept"] = 1 }, await AllOf(id));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task An_aborted_transaction_leaves_no_key_behind(bool pact)
    {
        var id = ClusterFixture.NewId();
        var shelf = Shelf(id);
        var abort = await Assert.ThrowsAsync<TransactionAbortedException>(() =>
            pact ? shelf.StartTxn(shelf.StockThenFail, "ghost", ActorAccessInfo.Of(shelf)) : shelf.StartTxn(shelf.StockThenFail, "ghost"));
        Assert.Equal(AbortReason.UserException, abort.Reason);
        Assert.Empty(await AllOf(id));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Moving_items_between_shelves_is_atomic(bool pact)
    {
        var (from, to) = (ClusterFixture.NewId(), ClusterFixture.NewId());
        await Shelf(from).StartTxn(Shelf(from).Stock, new Dictionary<string, int> { ["nut"] = 10 });
        Task Move(int count) => pact
            ? Shelf(from).StartTxn(Shelf(from).Take, new Move("nut", count, to), ActorAccessInfo.Of(Shelf(from), Shelf(to)))
            : Shelf(from).StartTxn(Shelf(from).Take, new Move("nut", count, to));

        await Move(4);
        await Assert.ThrowsAsync<TransactionAbortedException>(() => Move(7)); // only 6 left: nothing moves
        await Move(6);                                                        // the last ones: the key goes away

        Assert.Empty(await AllOf(from));
        Assert.Equal(new Dictionary<string, int> { ["nut"] = 10 }, await AllOf(to));
    }
}

/// <summary>Key-value state through the write-ahead log: a restarted silo brings back committed keys and deletions, nothing aborted.</summary>
public sealed class KeyValueRestartTests : IDisposable
{
    private readonly Durability.TemporaryFolder _data = new();

    public void Dispose() => _data.Dispose();

    [Fact]
    public async Task Committed_keys_and_deletions_survive_a_restart_and_aborted_writes_do_not()
    {
        var (first, second) = (ClusterFixture.NewId(), ClusterFixture.NewId());
        await using (var cluster = await ClusterFixture.StartAsync(o => o.DataFolder = _data.Path))
        {
            var a = cluster.Client.GetGrain<IShelf>(first);
            await a.StartTxn(a.Stock, new Dictionary<string, int> { ["x"] = 1, ["y"] = 2, ["z"] = 3 });
            await a.StartTxn(a.Remove, "y", ActorAccessInfo.Of(a));
            await a.StartTxn(a.Take, new Move("z", 3, second), ActorAccessInfo.Of(a, cluster.Client.GetGrain<IShelf>(second)));
            await Assert.ThrowsAsync<TransactionAbortedException>(() => a.StartTxn(a.StockThenFail, "ghost"));
        }

        await using (var restarted = await ClusterFixture.StartAsync(o => o.DataFolder = _data.Path))
        {
            var a = restarted.Client.GetGrain<IShelf>(first);
            var b = restarted.Client.GetGrain<IShelf>(second);
            Assert.Equal(new Dictionary<string, int> { ["x"] = 1 }, await a.StartTxn(a.All, 0));
            Assert.Equal(new Dictionary<string, int> { ["z"] = 3 }, await b.StartTxn(b.All, 0));
        }
    }

    [Fact]
    public async Task Each_transaction_logs_only_the_keys_it_changed_and_a_restart_after_a_checkpoint_applies_them_in_order()
    {
        var (first, second) = (ClusterFixture.NewId(), ClusterFixture.NewId());
        var stock = Enumerable.Range(0, 100).ToDictionary(i => $"item{i}", i => i);
        await using (var cluster = await ClusterFixture.StartAsync(o => o.DataFolder = _data.Path))
        {
            var a = cluster.Client.GetGrain<IShelf>(first);
            var b = cluster.Client.GetGrain<IShelf>(second);
            await a.StartTxn(a.Stock, stock);
            await a.StartTxn(a.Take, new Move("item7", 7, second), ActorAccessInfo.Of(a, b)); // PACT: deletes item7 here
            await a.StartTxn(a.Take, new Move("item8", 3, second));                           // ACT: item8 becomes 5
        }

        var changes = ChangeRecords().ToList();
        Assert.Equal([100, 1, 1, 1, 1], changes.Select(c => c.Entries.Count)); // the stock, then one key per actor and transaction
        Assert.All(changes, c => Assert.False(c.Whole));

        await using (var restarted = await ClusterFixture.StartAsync(o => o.DataFolder = _data.Path))
        {
            // Recovery ended with a checkpoint; these changes are logged on top of it.
            var a = restarted.Client.GetGrain<IShelf>(first);
            await a.StartTxn(a.Remove, "item0", ActorAccessInfo.Of(a));
            await a.StartTxn(a.Stock, new Dictionary<string, int> { ["item1"] = 100 });
        }

        stock.Remove("item7");
        stock.Remove("item0");
        stock["item8"] = 5;
        stock["item1"] = 100;
        await using (var again = await ClusterFixture.StartAsync(o => o.DataFolder = _data.Path))
        {
            var a = again.Client.GetGrain<IShelf>(first);
            var b = again.Client.GetGrain<IShelf>(second);
            Assert.Equal(stock, await a.StartTxn(a.All, 0));
            Assert.Equal(new Dictionary<string, int> { ["item7"] = 7, ["item8"] = 3 }, await b.StartTxn(b.All, 0));
        }
    }

    [Fact]
    public async Task Key_level_batches_that_ran_side_by_side_log_their_own_keys_and_survive_restarts()
    {
        var id = ClusterFixture.NewId();
        var items = Enumerable.Range(0, 5).Select(i => $"item{i}").ToArray();
        var expected = new Dictionary<string, int>();
        static ActorAccessInfo Keys(IKeyedShelf shelf, params string[] keys) => new ActorAccessInfo().AddKeys(shelf, keys);
        await using (var cluster = await ClusterFixture.StartAsync(o => o.DataFolder = _data.Path))
        {
            var shelf = cluster.Client.GetGrain<IKeyedShelf>(id);

            // A later batch's PACT finishes key b while an earlier one still holds key a: its version is made first,
            // but it is logged and committed after the earlier batch.
            var hold = $"restart-{Guid.NewGuid()}";
            var first = shelf.StartTxn(shelf.Write, new ShelfWrite("a", 1, hold), Keys(shelf, "a"));
            await Gates.WhenReached(hold);
            var second = shelf.StartTxn(shelf.Write, new ShelfWrite("b", 2), Keys(shelf, "b"));
            await Task.Delay(100);
            Gates.Release(hold);
            await Task.WhenAll(first, second);
            (expected["a"], expected["b"]) = (1, 2);

            var work = new List<Task>();
            for (var i = 0; i < 200; i++)
            {
                var (one, other) = (items[i % 5], items[(i * 3 + 1) % 5]);
                work.Add(i % 4 == 0
                    ? shelf.StartTxn(shelf.WriteEach, new[] { one, other }.Distinct().ToArray(), Keys(shelf, one, other))
                    : shelf.StartTxn(shelf.WriteEach, new[] { one }, Keys(shelf, one)));
                expected[one] = expected.GetValueOrDefault(one) + 1;
                if (i % 4 == 0 && other != one)
                {
                    expected[other] = expected.GetValueOrDefault(other) + 1;
                }
            }

            await Task.WhenAll(work);
            Assert.Equal(expected, await shelf.StartTxn(shelf.All, 0, ActorAccessInfo.Of(shelf)));
        }

        Assert.All(ChangeRecords(), c => Assert.False(c.Whole));
        Assert.All(ChangeRecords(), c => Assert.InRange(c.Entries.Count, 1, 5));
        for (var restart = 0; restart < 2; restart++)
        {
            await using var restarted = await ClusterFixture.StartAsync(o => o.DataFolder = _data.Path);
            var shelf = restarted.Client.GetGrain<IKeyedShelf>(id);
            Assert.Equal(expected, await shelf.StartTxn(shelf.All, 0));
            await shelf.StartTxn(shelf.WriteEach, new[] { "a" }, Keys(shelf, "a")); // logged on top of recovery's checkpoint
            expected["a"]++;
        }
    }

    /// <summary>The key-value change records in the data folder's segments, in log order.</summary>
    private IEnumerable<(bool Whole, List<Snapper.Logging.KeyedEntry> Entries)> ChangeRecords() =>
        Directory.GetFiles(_data.Path, "*.wal", SearchOption.AllDirectories).Order(StringComparer.Ordinal)
            .SelectMany(segment => Snapper.Logging.LogSegmentReader.Read(segment, isLastSegment: false))
            .Where(r => r.Type == Snapper.Logging.LogRecordType.StateChanged)
            .Select(r => Snapper.Logging.KeyedEntries.Decode(r.State));
}
