using Snapper.Tests.Actors;
using Xunit;

namespace Snapper.Tests.KeyValue;

/// <summary>
/// Key-level concurrency control (thesis §5.3.3.3-4): batches on disjoint keys of one actor run side by side, a key is
/// used by one PACT at a time in batch order, a PACT uses only the keys it declared; ACTs lock single keys. The silo's
/// bounds are long (<see cref="LongBoundsClusterFixture"/>): batches held at gates, and bursts that must all commit, end
/// by the test's steps, however slowly a loaded machine takes them.
/// </summary>
public sealed class KeyLevelConcurrencyTests(LongBoundsClusterFixture fixture) : IClassFixture<LongBoundsClusterFixture>
{
    private IKeyedShelf Shelf(long id) => fixture.Client.GetGrain<IKeyedShelf>(id);

    private static ActorAccessInfo Keys(IKeyedShelf shelf, params string[] keys) => new ActorAccessInfo().AddKeys(shelf, keys);

    private Task<Dictionary<string, int>> AllOf(IKeyedShelf shelf) => shelf.StartTxn(shelf.All, 0);

    [Fact]
    public async Task A_batch_on_other_keys_runs_while_an_earlier_batch_holds_a_key()
    {
        var shelf = Shelf(ClusterFixture.NewId());
        var (holdA, holdB) = ($"key-level-a-{Guid.NewGuid()}", $"key-level-b-{Guid.NewGuid()}");
        var first = shelf.StartTxn(shelf.Write, new ShelfWrite("a", 1, holdA), Keys(shelf, "a"));
        var firstTid = await Gates.WhenReached(holdA);

        // A later batch (its PACT is submitted only now) reaches its gate while the first still holds key a here.
        var second = shelf.StartTxn(shelf.Write, new ShelfWrite("b", 2, holdB), Keys(shelf, "b"));
        var secondTid = await Gates.WhenReached(holdB);
        Assert.True(secondTid > firstTid);

        Gates.Release(holdB);
        Gates.Release(holdA);
        await Task.WhenAll(first, second);
        Assert.Equal(new Dictionary<string, int> { ["a"] = 1, ["b"] = 2 }, await AllOf(shelf));
    }

    [Fact]
    public async Task A_key_is_used_by_one_pact_at_a_time_in_batch_order()
    {
        var shelf = Shelf(ClusterFixture.NewId());
        var (holdFirst, holdSecond) = ($"same-key-1-{Guid.NewGuid()}", $"same-key-2-{Guid.NewGuid()}");
        var first = shelf.StartTxn(shelf.Write, new ShelfWrite("a", 1, holdFirst), Keys(shelf, "a"));
        await Gates.WhenReached(holdFirst);

        // The second PACT wants key a too: it may not get it while the first holds it. (Passing never depends on timing:
        // a correct schedule never lets it reach the gate here, however long this waits.)
        var second = shelf.StartTxn(shelf.Write, new ShelfWrite("a", 10, holdSecond), Keys(shelf, "a"));
        var reached = Gates.WhenReached(holdSecond);
        Assert.NotSame(reached, await Task.WhenAny(reached, Task.Delay(300)));

        Gates.Release(holdFirst);
        await reached;
        Gates.Release(holdSecond);
        await Task.WhenAll(first, second);
        Assert.Equal(11, await shelf.StartTxn(shelf.Count, "a", Keys(shelf, "a")));
    }

    [Fact]
    public async Task Parallel_calls_of_one_pact_wait_for_their_keys_together()
    {
        var (shelf, caller) = (Shelf(ClusterFixture.NewId()), Shelf(ClusterFixture.NewId()));
        var hold = $"parallel-{Guid.NewGuid()}";
        var first = shelf.StartTxn(shelf.Write, new ShelfWrite("a", 1, hold), Keys(shelf, "a"));
        await Gates.WhenReached(hold);

        // Both calls of the second PACT wait for key a at once; each must get it once the first PACT is done.
        var declared = Keys(shelf, "a", "b").Add(shelf).Add(caller);
        var second = caller.StartTxn(caller.WriteInParallel, new ParallelWrites(shelf.GetPrimaryKeyLong(), [new("a", 1), new("a", 1), new("b", 1)]), declared.Add(shelf));
        await Task.Delay(200); // lets the calls queue for key a (they get it as well when they come later)
        Gates.Release(hold);
        await Task.WhenAll(first, second);
        Assert.Equal(new Dictionary<string, int> { ["a"] = 3, ["b"] = 1 }, await AllOf(shelf));
    }

    [Fact]
    public async Task A_key_not_declared_aborts_the_pact_naming_actor_and_key_and_leaves_nothing()
    {
        var shelf = Shelf(ClusterFixture.NewId());
        await shelf.StartTxn(shelf.Write, new ShelfWrite("kept", 1), Keys(shelf, "kept"));

        var abort = await Assert.ThrowsAsync<TransactionAbortedException>(() =>
            shelf.StartTxn(shelf.WriteEach, new[] { "kept", "other" }, Keys(shelf, "kept")));
        Assert.Equal(AbortReason.UndeclaredAccess, abort.Reason);
        Assert.Contains("'other'", abort.Message);
        Assert.Contains(shelf.GetGrainId().ToString(), abort.Message);

        var whole = await Assert.ThrowsAsync<TransactionAbortedException>(() => shelf.StartTxn(shelf.All, 0, Keys(shelf, "kept")));
        Assert.Equal(AbortReason.UndeclaredAccess, whole.Reason);
        Assert.Equal(new Dictionary<string, int> { ["kept"] = 1 }, await shelf.StartTxn(shelf.All, 0, ActorAccessInfo.Of(shelf)));
    }

    [Fact]
    public async Task A_failed_batch_takes_the_later_keyed_batches_with_it_and_their_changes_are_gone()
    {
        var shelf = Shelf(ClusterFixture.NewId());
        await shelf.StartTxn(shelf.Write, new ShelfWrite("b", 5), Keys(shelf, "b"));
        var (holdA, holdB) = ($"cascade-a-{Guid.NewGuid()}", $"cascade-b-{Guid.NewGuid()}");
        var failing = shelf.StartTxn(shelf.Write, new ShelfWrite("a", 1, holdA, ThenFail: true), Keys(shelf, "a"));
        await Gates.WhenReached(holdA);
        var later = shelf.StartTxn(shelf.Write, new ShelfWrite("b", 100, holdB), Keys(shelf, "b"));
        await Gates.WhenReached(holdB);
        Gates.Release(holdB); // the later PACT finishes its key b, ahead of the failing batch

        Gates.Release(holdA);
        Assert.Equal(AbortReason.UserException, (await Assert.ThrowsAsync<TransactionAbortedException>(() => failing)).Reason);
        Assert.Equal(AbortReason.CascadingAbort, (await Assert.ThrowsAsync<TransactionAbortedException>(() => later)).Reason);

        await shelf.StartTxn(shelf.WriteEach, new[] { "b" }, Keys(shelf, "b"));
        Assert.Equal(new Dictionary<string, int> { ["b"] = 6 }, await AllOf(shelf));
    }

    [Fact]
    public async Task Acts_on_different_keys_of_one_actor_hold_their_write_locks_at_once()
    {
        var shelf = Shelf(ClusterFixture.NewId());
        var (holdA, holdB) = ($"act-key-a-{Guid.NewGuid()}", $"act-key-b-{Guid.NewGuid()}");
        var first = shelf.StartTxn(shelf.Write, new ShelfWrite("a", 1, holdA));
        var firstTid = await Gates.WhenReached(holdA);
        var second = shelf.StartTxn(shelf.Write, new ShelfWrite("b", 2, holdB));
        Assert.True(await Gates.WhenReached(holdB) > firstTid); // a younger ACT got key b while the older holds key a

        // A younger ACT that wants key a, or the whole collection, dies (wait-die); nothing of it stays.
        Assert.Equal(AbortReason.WaitDie, (await Assert.ThrowsAsync<TransactionAbortedException>(() => shelf.StartTxn(shelf.WriteEach, new[] { "a" }))).Reason);
        Assert.Equal(AbortReason.WaitDie, (await Assert.ThrowsAsync<TransactionAbortedException>(() => shelf.StartTxn(shelf.All, 0))).Reason);

        Gates.Release(holdB);
        Gates.Release(holdA);
        await Task.WhenAll(first, second);
        await shelf.StartTxn(shelf.WriteEach, new[] { "a", "b" }); // the keys' locks were dropped and are made again
        Assert.Equal(new Dictionary<string, int> { ["a"] = 2, ["b"] = 3 }, await AllOf(shelf));
    }

    [Fact]
    public async Task A_key_is_created_and_deleted_under_its_write_lock()
    {
        var shelf = Shelf(ClusterFixture.NewId());
        await shelf.StartTxn(shelf.Write, new ShelfWrite("old", 1));
        var hold = $"create-key-{Guid.NewGuid()}";
        var creating = shelf.StartTxn(shelf.Write, new ShelfWrite("new", 7, hold));
        await Gates.WhenReached(hold);

        // The key being made is locked by its maker: a younger ACT that would delete or read it dies (wait-die) and
        // changes nothing; another key of the actor is deleted meanwhile.
        Assert.Equal(AbortReason.WaitDie, (await Assert.ThrowsAsync<TransactionAbortedException>(() => shelf.StartTxn(shelf.Delete, "new"))).Reason);
        Assert.Equal(AbortReason.WaitDie, (await Assert.ThrowsAsync<TransactionAbortedException>(() => shelf.StartTxn(shelf.Count, "new"))).Reason);
        Assert.True(await shelf.StartTxn(shelf.Delete, "old"));

        Gates.Release(hold);
        await creating;
        Assert.Equal(7, await shelf.StartTxn(shelf.Count, "new"));
        Assert.True(await shelf.StartTxn(shelf.Delete, "new"));
        Assert.False(await shelf.StartTxn(shelf.Delete, "new"));
        Assert.Empty(await AllOf(shelf));
    }

    [Fact]
    public async Task An_act_that_used_keys_and_then_the_whole_collection_sees_what_others_committed_meanwhile()
    {
        var shelf = Shelf(ClusterFixture.NewId());
        var holdA = $"widen-a-{Guid.NewGuid()}";
        var widening = shelf.StartTxn(shelf.WriteThenCount, new ShelfWrite("a", 1, holdA));
        await Gates.WhenReached(holdA);

        // A younger ACT commits key b while the older one holds key a: it must see b when it takes the whole collection.
        await shelf.StartTxn(shelf.Write, new ShelfWrite("b", 5));
        Gates.Release(holdA);
        Assert.Equal(new Dictionary<string, int> { ["a"] = 1, ["b"] = 5 }, await widening);
        Assert.Equal(new Dictionary<string, int> { ["a"] = 1, ["b"] = 5 }, await AllOf(shelf));
    }

    [Fact]
    public async Task Keyed_batches_pacts_declared_whole_and_acts_mix_on_one_actor()
    {
        var shelf = Shelf(ClusterFixture.NewId());
        var items = Enumerable.Range(0, 6).Select(i => $"item{i}").ToArray();
        var pacts = new List<Task>();
        var acts = new List<(string Item, Task<bool> Committed)>();
        var expected = items.ToDictionary(item => item, _ => 0);
        for (var round = 0; round < 10; round++)
        {
            var (one, next, other) = (items[round % 6], items[(round + 1) % 6], items[(round + 3) % 6]);
            foreach (var item in items)
            {
                pacts.Add(shelf.StartTxn(shelf.WriteEach, new[] { item }, Keys(shelf, item)));
                expected[item]++;
            }

            pacts.Add(shelf.StartTxn(shelf.WriteEach, new[] { one, next }, Keys(shelf, one, next)));
            pacts.Add(shelf.StartTxn(shelf.WriteEach, new[] { one }, ActorAccessInfo.Of(shelf)));
            acts.Add((other, Committed(shelf.StartTxn(shelf.WriteEach, new[] { other }))));
            expected[one] += 2;
            expected[next]++;
        }

        await Task.WhenAll(pacts);
        foreach (var (item, committed) in acts)
        {
            expected[item] += await committed ? 1 : 0;
        }

        Assert.Equal(expected, await AllOf(shelf));
    }

    /// <summary>Whether an ACT committed; one that gave way to PACT batches (hybrid deadlock avoidance) changed nothing.</summary>
    private static async Task<bool> Committed(Task act)
    {
        try
        {
            await act;
            return true;
        }
        catch (TransactionAbortedException abort) when (abort.Reason is AbortReason.HybridDeadlock or AbortReason.WaitDie)
        {
            return false;
        }
    }
}
