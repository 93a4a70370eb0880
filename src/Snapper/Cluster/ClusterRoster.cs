using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Orleans.Runtime.MembershipService.SiloMetadata;
using Snapper.Hosting;

namespace Snapper.Cluster;

/// <summary>
/// The silos of a Snapper cluster by role: which active silo is the master and which is worker k. Each silo announces its
/// role and worker index in Orleans' silo metadata (<see cref="MetadataKeys"/>), which every silo caches from membership;
/// a silo that is down or not yet known has no entry, and placing on it fails with <see cref="WorkerUnavailableException"/>.
/// </summary>
internal sealed class ClusterRoster(IOptions<SnapperOptions> options, IServiceProvider services, ILocalSiloDetails localSilo, IClusterMembershipService membership)
{
    private readonly SnapperOptions _options = options.Value;
    private readonly ISiloMetadataCache? _metadata = services.GetService<ISiloMetadataCache>();

    internal static class MetadataKeys
    {
        public const string Role = "snapper-role";
        public const string Worker = "snapper-worker";
    }

    public SiloAddress LocalSilo => localSilo.SiloAddress;

    /// <summary>Every silo this roster has read as a worker's, kept past its death (see <see cref="WorkerSiloHistory"/>).</summary>
    public WorkerSiloHistory Seen { get; } = new();

    /// <summary>
    /// Reads the metadata of every active silo, so that <see cref="Seen"/> knows each that announced itself as a worker;
    /// false while the metadata of an active silo other than this one has not reached this silo's cache yet.
    /// </summary>
    public bool LearnWorkers()
    {
        if (_metadata is null)
        {
            return true;
        }

        var complete = true;
        foreach (var member in membership.CurrentSnapshot.Members.Values)
        {
            if (member.Status != SiloStatus.Active || member.SiloAddress.Equals(localSilo.SiloAddress))
            {
                continue;
            }

            var entries = _metadata.GetSiloMetadata(member.SiloAddress).Metadata;
            complete &= entries.Count > 0;
            if (WorkerIndexIn(entries) is { } worker)
            {
                Seen.Learned(member.SiloAddress, worker);
            }
        }

        return complete;
    }

    /// <summary>The active silo that is worker <paramref name="index"/>, or null.</summary>
    public SiloAddress? WorkerSilo(int index) => Find(SiloRole.Worker, index);

    /// <summary>The active master silo, or null.</summary>
    public SiloAddress? MasterSilo => Find(SiloRole.Master, 0);

    /// <summary>Worker <paramref name="index"/>'s silo, or <see cref="WorkerUnavailableException"/>.</summary>
    public SiloAddress RequireWorker(int index) => WorkerSilo(index)
        ?? throw new WorkerUnavailableException($"worker {index}", "no active silo announces itself as that worker (it is down, or not started yet).");

    public SiloAddress RequireMaster() => MasterSilo
        ?? throw new WorkerUnavailableException("master", "no active silo announces itself as the master (it is down, or not started yet).");

    private SiloAddress? Find(SiloRole role, int index)
    {
        if (_options.Role == role && (role == SiloRole.Master || _options.WorkerIndex == index))
        {
            return localSilo.SiloAddress;
        }

        if (_metadata is null)
        {
            return null;
        }

        foreach (var member in membership.CurrentSnapshot.Members.Values)
        {
            if (member.Status != SiloStatus.Active)
            {
                continue;
            }

            var entries = _metadata.GetSiloMetadata(member.SiloAddress).Metadata;
            if (!entries.TryGetValue(MetadataKeys.Role, out var announced) || announced != role.ToString())
            {
                continue;
            }

            if (role == SiloRole.Master)
            {
                return member.SiloAddress;
            }

            if (WorkerIndexIn(entries) is { } worker)
            {
                // Only the master's watcher asks who a dead silo was (and prunes what it learned).
                if (_options.Role == SiloRole.Master)
                {
                    Seen.Learned(member.SiloAddress, worker);
                }

                if (worker == index)
                {
                    return member.SiloAddress;
                }
            }
        }

        return null;
    }

    private static int? WorkerIndexIn(IReadOnlyDictionary<string, string> entries) =>
        entries.TryGetValue(MetadataKeys.Role, out var role) && role == nameof(SiloRole.Worker)
        && entries.TryGetValue(MetadataKeys.Worker, out var text)
        && int.TryParse(text, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out var worker)
            ? worker
            : null;
}
