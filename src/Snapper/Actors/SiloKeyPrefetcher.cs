using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Snapper.Hosting;

namespace Snapper.Actors;

/// <summary>
/// On every silo: follows Orleans' cluster membership and asks each silo that becomes active for its key
/// (<see cref="SiloCallKeys.Prefetch"/>), so that the first transactions between two silos do not wait for that question,
/// nor abort when it is slow (a silo that just joined, a busy cluster); forgets the keys of silos that died. A call that
/// arrives before the answer shares the question; one whose question failed asks again.
/// </summary>
internal sealed class SiloKeyPrefetcher(IOptions<SnapperOptions> options, IClusterMembershipService membership, SiloCallKeys keys,
    ILogger<SiloKeyPrefetcher> logger) : SiloRoleLoop(role: null, options.Value)
{
    protected override async Task RunAsync(CancellationToken stopping)
    {
        try
        {
            // Each update is the whole membership, so one missed in between costs nothing.
            await foreach (var snapshot in membership.MembershipUpdates.WithCancellation(stopping))
            {
                foreach (var member in snapshot.Members.Values)
                {
                    if (member.Status == SiloStatus.Active)
                    {
                        keys.Prefetch(member.SiloAddress);
                    }
                    else if (member.Status == SiloStatus.Dead)
                    {
                        keys.Forget(member.SiloAddress);
                    }
                }
            }
        }
        catch (OperationCanceledException) when (stopping.IsCancellationRequested)
        {
        }
        catch (Exception exception)
        {
            // Only the head start is lost: a call from another silo still asks for its key when it needs it.
            logger.LogWarning(exception, "Stopped following cluster membership; other silos' keys are now asked at their first call");
        }
    }
}
