using Xunit;

namespace Snapper.Tests.Units;

public sealed class RebalancePlanTests
{
    private static GrainId[] Actors(string worker, int count) => [.. Enumerable.Range(0, count).Select(i => GrainId.Create("account", $"{worker}-{i}"))];

    private static Dictionary<int, int> After(IReadOnlyDictionary<int, IReadOnlyList<GrainId>> hosted, IReadOnlyList<ActorMove> moves)
    {
        var counts = hosted.ToDictionary(e => e.Key, e => e.Value.Count);
        foreach (var move in moves)
        {
            Assert.Contains(move.Actor, hosted[move.From]);
            counts[move.From]--;
            counts[move.To]++;
        }

        return counts;
    }

    [Fact]
    public void Two_full_workers_and_two_empty_ones_give_half_of_their_actors_each_one_to_each()
    {
        var hosted = new Dictionary<int, IReadOnlyList<GrainId>> { [0] = Actors("a", 10), [1] = Actors("b", 10), [2] = [], [3] = [] };

        var moves = RebalancePlan.Plan(hosted);

        Assert.Equal(10, moves.Count);
        Assert.All(After(hosted, moves).Values, count => Assert.Equal(5, count));
        Assert.Equal(5, moves.Count(m => m.From == 0));
        Assert.Equal(5, moves.Count(m => m.To == 2));
        Assert.Equal(moves.Count, moves.Select(m => m.Actor).Distinct().Count());
        // The actors listed last are the ones that go.
        Assert.All(moves.Where(m => m.From == 0), m => Assert.Contains(m.Actor, hosted[0].Skip(5)));
    }

    [Fact]
    public void An_uneven_total_leaves_every_worker_within_one_actor_with_the_fewest_moves()
    {
        var hosted = new Dictionary<int, IReadOnlyList<GrainId>> { [0] = Actors("a", 7), [1] = Actors("b", 2), [5] = [] };

        var moves = RebalancePlan.Plan(hosted);

        // 9 over 3: 3 each; worker 0 gives 4, worker 1 receives 1, worker 5 receives 3.
        Assert.Equal(4, moves.Count);
        Assert.Equal(new Dictionary<int, int> { [0] = 3, [1] = 3, [5] = 3 }, After(hosted, moves));

        var ten = new Dictionary<int, IReadOnlyList<GrainId>> { [0] = Actors("a", 6), [1] = Actors("b", 4), [2] = [] };
        var counts = After(ten, RebalancePlan.Plan(ten));
        Assert.True(counts.Values.Max() - counts.Values.Min() <= 1);
        Assert.Equal(3, RebalancePlan.Plan(ten).Count);
    }

    [Fact]
    public void A_balanced_cluster_one_worker_or_none_needs_no_move()
    {
        Assert.Empty(RebalancePlan.Plan(new Dictionary<int, IReadOnlyList<GrainId>> { [0] = Actors("a", 3), [1] = Actors("b", 4) }));
        Assert.Empty(RebalancePlan.Plan(new Dictionary<int, IReadOnlyList<GrainId>> { [0] = Actors("a", 3) }));
        Assert.Empty(RebalancePlan.Plan(new Dictionary<int, IReadOnlyList<GrainId>>()));
    }
}
