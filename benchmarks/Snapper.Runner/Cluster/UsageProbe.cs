using System.Diagnostics;

namespace Snapper.Runner.Cluster;

/// <summary>
/// Samples each silo of a cluster (and the runner's own process) at the start and the end of a measured cell: its
/// CPU time (utime and stime of <c>/proc/PID/stat</c>, which <see cref="Process.UserProcessorTime"/> and
/// <see cref="Process.PrivilegedProcessorTime"/> read and convert from clock ticks) and its Snapper counters from the stats file it keeps. The differences are what the cell cost.
/// </summary>
public sealed class UsageProbe(ClusterFolder cluster)
{
    /// <summary>The name the runner's own process is reported under.</summary>
    public const string Client = "client";

    /// <summary>Readings at the start of a cell.</summary>
    public Mark Start() => new(Stopwatch.GetTimestamp(), [.. Names().Select(Read)]);

    /// <summary>What each process used since <paramref name="start"/>; a process restarted or gone in between gets NaN CPU.</summary>
    public IReadOnlyList<SiloUsage> Since(Mark start)
    {
        var wall = Stopwatch.GetElapsedTime(start.Timestamp).TotalSeconds;
        return start.Readings.Select(before =>
        {
            var after = Read(before.Name);
            // A silo restarted during the cell started its CPU time and counters again: no difference means anything.
            var same = before.Pid is not null && before.Pid == after.Pid;
            var user = same ? (after.User - before.User).TotalSeconds : double.NaN;
            var system = same ? (after.System - before.System).TotalSeconds : double.NaN;
            long? Delta(string key) => !same || before.Stats is null || after.Stats is null ? null : after.Stats.GetValueOrDefault(key) - before.Stats.GetValueOrDefault(key);
            return new SiloUsage(before.Name, user, system, wall, Delta("pact_batches"), Delta("pact_batched"));
        }).ToArray();
    }

    private IEnumerable<string> Names() => cluster.Silos.Append(Client);

    private Reading Read(string name)
    {
        if (name == Client)
        {
            using var self = Process.GetCurrentProcess();
            return new Reading(name, Environment.ProcessId, self.UserProcessorTime, self.PrivilegedProcessorTime, null);
        }

        var stats = cluster.Stats(name);
        if (cluster.Pid(name) is not { } pid)
        {
            return new Reading(name, null, TimeSpan.Zero, TimeSpan.Zero, stats);
        }

        try
        {
            using var process = Process.GetProcessById(pid);
            return new Reading(name, pid, process.UserProcessorTime, process.PrivilegedProcessorTime, stats);
        }
        catch (Exception e) when (e is ArgumentException or InvalidOperationException)
        {
            // Not running: the cell reports no CPU for it rather than failing.
            return new Reading(name, null, TimeSpan.Zero, TimeSpan.Zero, stats);
        }
    }

    /// <summary>The readings at a cell's start.</summary>
    public sealed record Mark(long Timestamp, IReadOnlyList<Reading> Readings);

    /// <summary>One process's reading: pid (null if not running), user and system CPU time so far, Snapper counters (null without a stats file).</summary>
    public sealed record Reading(string Name, int? Pid, TimeSpan User, TimeSpan System, IReadOnlyDictionary<string, long>? Stats);
}
