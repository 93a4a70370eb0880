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

    // The master process the copies come from (one unless a test restarts it).
    private readonly Guid _incarnation = Guid.NewGuid();

    /// <summary>The master's copy at <paramref name="version"/>, from a master process of its own (a restarted one).</summary>
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
    public void A_master_that_restarted_without_its_directory_is_taken_at_its_word()
    {
        Assert.True(_directory.Replace(Master(7, (_actor, Away(_actor)))));

        // A master without a data folder counts from 0 again after a restart (its snapshot has a new incarnation).
        Assert.True(_directory.Replace(Master(1, (_other, Away(_other)))));
        Assert.Equal(Home(_actor), _map.WorkerOf(_actor));
        Assert.Equal(Away(_other), _map.WorkerOf(_other));
        Assert.True(_directory.Apply(_actor, Away(_actor), version: 2));
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
        // Version 3 moved the actor home and version 5 away again. 5 reaches this silo before the master's copy taken at
        // version 4, which has the actor home (by 3) and another actor away (by 4, a move this silo missed).
        Assert.True(_directory.Apply(_actor, Home(_actor), version: 3));
        Assert.True(_directory.Apply(_actor, Away(_actor), version: 5));
        var masterAt4 = new DirectorySnapshot(4, [new MovedActor(_other, Away(_other))], _incarnation);
        Assert.True(_directory.Replace(masterAt4));
        Assert.Equal(Away(_actor), _map.WorkerOf(_actor));
        Assert.Equal(Away(_other), _map.WorkerOf(_other));
        Assert.False(_directory.Apply(_actor, Home(_actor), version: 3));

        // Copies no newer than the last one taken change nothing; a newer one decides again.
        Assert.False(_directory.Replace(masterAt4));
        Assert.True(_directory.Replace(new DirectorySnapshot(6, [new MovedActor(_other, Away(_other))], _incarnation)));
        Assert.Equal(Home(_actor), _map.WorkerOf(_actor));
        Assert.Equal(6, _directory.Version);
    }
}
