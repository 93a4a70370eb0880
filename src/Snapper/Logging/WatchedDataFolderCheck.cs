using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Snapper.Hosting;

namespace Snapper.Logging;

/// <summary>
/// Warns when the silo starts if the write-ahead log's folder lies inside the host's content root while the host
/// reloads its configuration files on change.
/// </summary>
/// <remarks>
/// A default .NET host (<c>Host.CreateApplicationBuilder</c>, <c>Host.CreateDefaultBuilder</c>) watches its content root,
/// subfolders included, for changes to appsettings files; on Linux the watcher is woken by every write below the root.
/// With the log there, each log write (about a thousand a second under load with fsync) wakes the host's file watcher
/// thread for nothing: measured in the SmallBank runner at PACT 64 in flight with fsync, about 1 % of the CPU.
/// The log works either way, so this is a warning, once, with the two ways out. A silo hosted without a host environment
/// or configuration (both optional here) has no configuration watcher to wake.
/// </remarks>
internal sealed class WatchedDataFolderCheck(IOptions<SnapperOptions> options, ILogger<WatchedDataFolderCheck> logger,
    IHostEnvironment? environment = null, IConfiguration? configuration = null)
    : ILifecycleParticipant<ISiloLifecycle>
{
    /// <summary>The configuration key a default host reads to decide whether it reloads its configuration files on change.</summary>
    public const string ReloadOnChangeKey = "hostBuilder:reloadConfigOnChange";

    public void Participate(ISiloLifecycle lifecycle) => lifecycle.Subscribe(
        nameof(WatchedDataFolderCheck), ServiceLifecycleStage.First,
        _ =>
        {
            if (Warning(options.Value.DataFolder, environment?.ContentRootPath, configuration?[ReloadOnChangeKey]) is { } warning)
            {
                logger.LogWarning("{Warning}", warning);
            }

            return Task.CompletedTask;
        });

    /// <summary>
    /// The warning for a log in <paramref name="dataFolder"/> under a host with content root <paramref name="contentRoot"/>
    /// and the configuration value <paramref name="reloadOnChange"/> of <see cref="ReloadOnChangeKey"/> (absent: the hosts'
    /// default, which reloads); null when nothing watches the log's writes.
    /// </summary>
    public static string? Warning(string? dataFolder, string? contentRoot, string? reloadOnChange)
    {
        if (string.IsNullOrEmpty(dataFolder) || string.IsNullOrEmpty(contentRoot)
            || (bool.TryParse(reloadOnChange, out var reloads) && !reloads))
        {
            return null;
        }

        // Relative folders resolve against the working directory, as the log's own files do.
        var root = Path.TrimEndingDirectorySeparator(Path.GetFullPath(contentRoot));
        var folder = Path.TrimEndingDirectorySeparator(Path.GetFullPath(dataFolder));
        var inside = folder.Equals(root, StringComparison.Ordinal)
            || folder.StartsWith(root + Path.DirectorySeparatorChar, StringComparison.Ordinal);
        return inside
            ? $"Snapper's data folder {folder} is inside the host's content root {root}, which the host watches for configuration " +
              $"changes: every write-ahead log write wakes the host's file watcher. Put the data folder outside the content root, " +
              $"or set {ReloadOnChangeKey} to false."
            : null;
    }
}
