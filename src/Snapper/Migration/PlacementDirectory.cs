using System.Text.Json;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Snapper.Cluster;
using Snapper.Hosting;

namespace Snapper.Migration;

/// <summary>
/// The actors that live away from their home worker (<see cref="ActorPlacementMap.HomeOf"/>) because they were migrated,
/// with a version that grows with every migration. The master's copy decides; every silo keeps a copy, on disk when it has
/// a data folder (<c>placement.json</c>), so that a restarted silo places actors where they are even while the master is
/// down. A migration commits by writing the master's copy; it then reaches every worker before the actor serves again.
/// </summary>
/// <remarks>
/// A silo that was down during a migration starts with an older copy and asks the master for the current one
/// (<see cref="MigrationDirectoryRefresher"/>). Until it has it, it may send an activation of a moved actor to the actor's
/// old worker; that worker's copy is current (it took part in the migration), and it refuses the activation
/// (<see cref="ActorMigratingException"/>, which clients retry), so an actor is never active on two workers.
/// <para>
/// Invariant: a copy never goes back to older word about an actor. Moves reach a worker one by one (<see cref="Apply"/>,
/// from the helper that committed them) and whole (<see cref="Replace"/>, the master's copy). A helper sends a message
/// again when the first one timed out, and the first may still arrive, after a later migration of the same actor or
/// after a whole copy that holds the move. Taken then, it would flip the map of the actor's current worker back to the
/// worker it left, and that worker's own map refuses every activation of it. So a move counts only if its version is
/// above the last move of the same actor this copy took and above the last whole copy it took.
/// </para>
/// </remarks>
internal sealed class PlacementDirectory
{
    private const string FileName = "placement.json";
    private readonly ActorPlacementMap _map;
    private readonly ILogger<PlacementDirectory> _logger;
    private readonly string? _file;
    private readonly object _gate = new();

    // Under _gate (see the invariant above): per actor, the version of the last move of it taken one by one since the last
    // whole copy, and the master's version of that copy, which holds every move up to it.
    private readonly Dictionary<GrainId, long> _movedAt = [];
    private long _wholeAt;

    public PlacementDirectory(ActorPlacementMap map, IOptions<SnapperOptions> options, ILogger<PlacementDirectory> logger)
    {
        _map = map;
        _logger = logger;
        _file = options.Value.DataFolder is { } folder ? Path.Combine(folder, FileName) : null;
        if (options.Value.Role != SiloRole.Worker)
        {
            MarkRead();
        }

        if (_file is not null && File.Exists(_file))
        {
            var stored = JsonSerializer.Deserialize<StoredDirectory>(File.ReadAllBytes(_file))
                ?? throw new SnapperException($"The placement directory {_file} is empty or damaged.");
            Version = stored.Version;
            foreach (var (actor, worker) in stored.Moved)
            {
                map.Move(GrainId.Parse(actor), worker);
            }
        }
    }

    /// <summary>Grows by one with every migration the master commits.</summary>
    public long Version { get; private set; }

    /// <summary>
    /// This process's identity, new at every start: the master's tells a worker whether a freeze came from a helper of the
    /// master running now, or of one that crashed (whose migration can no longer go on).
    /// </summary>
    public Guid Incarnation { get; } = Guid.NewGuid();

    // Completed on the master and embedded silos at once, on a worker once it has read the master's copy.
    private readonly TaskCompletionSource _read = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>Marks this copy as checked against the master's since the silo started.</summary>
    public void MarkRead() => _read.TrySetResult();

    /// <summary>
    /// Completes once this copy was checked against the master's since the silo started (at once on the master and on an
    /// embedded silo). A restarted worker may have missed a migration while it was down, and must not activate an actor
    /// that lives elsewhere by its older copy: its actors activate only after this, or fail with
    /// <see cref="WorkerUnavailableException"/> while the master cannot be reached.
    /// </summary>
    public async Task WhenReadAsync(TimeSpan bound)
    {
        try
        {
            await _read.Task.WaitAsync(bound);
        }
        catch (TimeoutException)
        {
            throw new WorkerUnavailableException("master", $"this worker has not been able to read the master's placement directory since it started ({bound}).");
        }
    }

    public DirectorySnapshot Snapshot()
    {
        lock (_gate)
        {
            return new DirectorySnapshot(Version, [.. _map.Moved.Select(e => new MovedActor(e.Key, e.Value))], Incarnation);
        }
    }

    /// <summary>On the master: commits the move of <paramref name="actor"/> (durable before this returns); the new version.</summary>
    public long Commit(GrainId actor, int worker)
    {
        lock (_gate)
        {
            _map.Move(actor, worker);
            Version++;
            Persist();
            return Version;
        }
    }

    /// <summary>
    /// On any silo: takes a move the master committed as version <paramref name="version"/>, unless this copy already has
    /// newer word about the actor (a later move of it, or a whole copy at or past that version). Returns whether it did.
    /// </summary>
    public bool Apply(GrainId actor, int worker, long version)
    {
        lock (_gate)
        {
            if (version <= _wholeAt || (_movedAt.TryGetValue(actor, out var moved) && version <= moved))
            {
                _logger.LogDebug("Move of {Actor} to worker {Worker} (version {Version}) arrived after newer word about it; ignored", actor, worker, version);
                return false;
            }

            _map.Move(actor, worker);
            _movedAt[actor] = version;
            Version = Math.Max(Version, version);
            Persist();
            return true;
        }
    }

    /// <summary>On any silo: replaces this copy by the master's when that is newer.</summary>
    public bool Replace(DirectorySnapshot master)
    {
        lock (_gate)
        {
            if (master.Version <= Version)
            {
                return false;
            }

            foreach (var actor in _map.Moved.Keys.Except(master.Moved.Select(m => m.Actor)).ToArray())
            {
                _map.Move(actor, _map.HomeOf(actor));
            }

            foreach (var moved in master.Moved)
            {
                _map.Move(moved.Actor, moved.Worker);
            }

            Version = master.Version;
            _wholeAt = master.Version;
            _movedAt.Clear(); // every move taken one by one is at or below Version, so the copy holds it
            Persist();
            _logger.LogInformation("Placement directory updated from the master to version {Version} ({Count} moved actor(s))", Version, master.Moved.Length);
            return true;
        }
    }

    /// <summary>Writes the copy whole to a temporary file, flushed to disk, and renames it over the old one.</summary>
    private void Persist()
    {
        if (_file is null)
        {
            return;
        }

        Directory.CreateDirectory(Path.GetDirectoryName(_file)!);
        var temporary = _file + ".tmp";
        using (var stream = new FileStream(temporary, FileMode.Create, FileAccess.Write, FileShare.None))
        {
            JsonSerializer.Serialize(stream, new StoredDirectory(Version, _map.Moved.ToDictionary(e => e.Key.ToString(), e => e.Value)));
            stream.Flush(flushToDisk: true);
        }

        File.Move(temporary, _file, overwrite: true);
    }

    private sealed record StoredDirectory(long Version, Dictionary<string, int> Moved);
}

/// <summary>A copy of the placement directory as the master sends it.</summary>
[GenerateSerializer, Immutable, Alias("snapper.migration.directory")]
internal sealed record DirectorySnapshot([property: Id(0)] long Version, [property: Id(1)] MovedActor[] Moved, [property: Id(2)] Guid MasterIncarnation);

/// <summary>An actor that lives on <see cref="Worker"/> rather than its home.</summary>
[GenerateSerializer, Immutable, Alias("snapper.migration.moved")]
internal sealed record MovedActor([property: Id(0)] GrainId Actor, [property: Id(1)] int Worker);
