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
            if (entries.TryGetValue(MetadataKeys.Role, out var announced) && announced == role.ToString()
                && (role == SiloRole.Master || (entries.TryGetValue(MetadataKeys.Worker, out var worker) && worker == index.ToString(System.Globalization.CultureInfo.InvariantCulture))))
            {
                return member.SiloAddress;
            }
        }

        return null;
    }
}
