using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using Snapper.Cluster;
using Snapper.Hosting;
using Snapper.Migration;
using Xunit;

namespace Snapper.Tests.Units;

/// <summary>
/// A worker's copy of the placement directory takes moves one by one (from the helper that committed them) and whole
/// (the master's copy), in whatever order they arrive, and never goes back to older word about an actor.
/// </summary>
public sealed class PlacementDirectoryTests
{
    private readonly ActorPlacementMap _map;
    private readonly PlacementDirectory _directory;
    private readonly GrainId _actor = GrainId.Create("account", "moving");
    private readonly GrainId _other = GrainId.Create("account", "other");

    public PlacementDirectoryTests()
    {
        var options = Options.Create(new SnapperOptions { Role = SiloRole.Worker, Workers = 2, WorkerIndex = 0 });
        _map = new ActorPlacementMap(options, new ServiceCollection().BuildServiceProvider());
        _directory = new PlacementDirectory(_map, options, NullLogger<PlacementDirectory>.Instance);
    }

    private int Home(GrainId actor) => _map.HomeOf(actor);

    private int Away(GrainId actor) => 1 - _map.HomeOf(actor);

    /// <summary>The master's copy at <paramref name="version"/>.</summary>
    private static DirectorySnapshot Master(long version, params (GrainId Actor, int Worker)[] moved) =>
        new(version, [.. moved.Select(m => new MovedActor(m.Actor, m.Worker))], Guid.NewGuid());

    [Fact]
    public void A_move_that_arrives_after_a_later_move_of_the_same_actor_is_not_taken()
    {
        Assert.True(_directory.Apply(_actor, Away(_actor), version: 1));
        Assert.True(_directory.Apply(_actor, Home(_actor), version: 2));

        // The first move's message again (its helper sent it a second time after a timeout), after the move back.
        Assert.False(_directory.Apply(_actor, Away(_actor), version: 1));
        Assert.Equal(Home(_actor), _map.WorkerOf(_actor));
    }

    [Fact]
    public void Moves_of_different_actors_count_in_whatever_order_they_arrive()
    {
        // Two helpers committed version 4 (the other actor) and 5 (this one); 5 arrives first.
        Assert.True(_directory.Apply(_actor, Away(_actor), version: 5));
        Assert.True(_directory.Apply(_other, Away(_other), version: 4));
        Assert.Equal(Away(_actor), _map.WorkerOf(_actor));
        Assert.Equal(Away(_other), _map.WorkerOf(_other));
    }

    [Fact]
    public void A_move_the_masters_whole_copy_already_holds_is_not_taken_again_after_a_later_one()
    {
        // The master's copy at version 3 already has the actor back home (moved away at 2, back at 3).
        Assert.True(_directory.Replace(Master(3)));
        Assert.False(_directory.Apply(_actor, Away(_actor), version: 2));
        Assert.Equal(Home(_actor), _map.WorkerOf(_actor));

        // A move after the copy counts.
        Assert.True(_directory.Apply(_actor, Away(_actor), version: 4));
        Assert.Equal(Away(_actor), _map.WorkerOf(_actor));
    }

    [Fact]
    public void A_whole_copy_takes_moves_this_copy_missed_and_a_move_after_it_still_counts()
    {
        // Version 2 (the other actor) never reached this silo; version 3 (this actor) did. The master's copy at 4 has both.
        Assert.True(_directory.Apply(_actor, Away(_actor), version: 3));
        Assert.True(_directory.Replace(Master(4, (_actor, Away(_actor)), (_other, Away(_other)))));
        Assert.Equal(Away(_other), _map.WorkerOf(_other));

        // The helper of version 3 sends its message again: the copy holds it already. Version 5 moves the actor home.
        Assert.False(_directory.Apply(_actor, Away(_actor), version: 3));
        Assert.True(_directory.Apply(_actor, Home(_actor), version: 5));
        Assert.Equal(Home(_actor), _map.WorkerOf(_actor));
        Assert.Equal(5, _directory.Version);
    }
}
