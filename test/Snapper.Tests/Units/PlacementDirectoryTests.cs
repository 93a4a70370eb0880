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

    private DirectorySnapshot Master(long version, params (GrainId Actor, int Worker)[] moved) =>
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
    public void A_whole_copy_keeps_the_moves_applied_here_after_it_was_taken_and_takes_the_rest()
    {
        // Version 5 moved the actor and reached this silo before the master's copy taken at version 4, which already
        // had another actor away (version 4) that this silo missed.
        Assert.True(_directory.Apply(_actor, Away(_actor), version: 5));
        Assert.True(_directory.Replace(Master(4, (_other, Away(_other)))));
        Assert.Equal(Away(_actor), _map.WorkerOf(_actor));
        Assert.Equal(Away(_other), _map.WorkerOf(_other));

        // Copies no newer than the last one taken change nothing; a newer one decides again.
        Assert.False(_directory.Replace(Master(4)));
        Assert.True(_directory.Replace(Master(6, (_other, Away(_other)))));
        Assert.Equal(Home(_actor), _map.WorkerOf(_actor));
        Assert.Equal(6, _directory.Version);
    }
}
