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
/// <remarks>
/// Membership speaks only when something changes, so a question that failed (the other silo was still starting, or did
/// not answer within the bound) would not be asked again until the cluster changed: every <see cref="RetryPeriod"/>, an
/// active silo whose key is still unknown is asked again (at most one question per silo is ever in flight).
/// </remarks>
internal sealed class SiloKeyPrefetcher(IOptions<SnapperOptions> options, IClusterMembershipService membership, SiloCallKeys keys,
    ILogger<SiloKeyPrefetcher> logger) : SiloRoleLoop(role: null, options.Value)
{
    /// <summary>How often active silos whose key is unknown are asked again.</summary>
    private static readonly TimeSpan RetryPeriod = TimeSpan.FromSeconds(1);

    protected override Task RunAsync(CancellationToken stopping) => Task.WhenAll(FollowMembershipAsync(stopping), AskAgainAsync(stopping));

    private async Task FollowMembershipAsync(CancellationToken stopping)
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

    private async Task AskAgainAsync(CancellationToken stopping)
    {
        using var timer = new PeriodicTimer(RetryPeriod);
        try
        {
            while (await timer.WaitForNextTickAsync(stopping))
            {
                foreach (var member in membership.CurrentSnapshot.Members.Values)
                {
                    if (member.Status == SiloStatus.Active && !keys.Knows(member.SiloAddress))
                    {
                        keys.Prefetch(member.SiloAddress); // this silo's own address is skipped there
                    }
                }
            }
        }
        catch (OperationCanceledException) when (stopping.IsCancellationRequested)
        {
        }
        catch (Exception exception)
        {
            // As for membership above: only the second look is lost, and a call still asks for a key it needs.
            logger.LogWarning(exception, "Stopped asking again for other silos' keys; a key whose question failed is now asked at the next call that needs it");
        }
    }
}
