using System.Diagnostics;

namespace Snapper;

/// <summary>
/// An opt-in policy for retrying a transaction that aborted for a transient reason
/// (<see cref="TransactionAbortedException.IsTransient"/>): the same first method and input run again as a new
/// transaction (a new tid) after a backoff with jitter, until one commits, one aborts for a final reason, or the
/// attempts or the overall bound run out; then the last abort is thrown.
/// </summary>
/// <remarks>
/// A retried transaction commits at most once: each attempt is a transaction of its own, and an aborted attempt left
/// nothing behind. What is not retried: final aborts (user exceptions, undeclared access, invalid calls), and outcomes
/// that are not aborts (<see cref="TransactionInDoubtException"/>: the attempt may have committed).
/// </remarks>
public sealed record RetryPolicy
{
    /// <summary>A policy of 5 attempts, backoff from 2 ms doubling to at most 200 ms (full jitter), within 30 s.</summary>
    public static RetryPolicy Default { get; } = new();

    /// <summary>Attempts in all, the first included (at least 1).</summary>
    public int MaxAttempts { get; init; } = 5;

    /// <summary>The largest wait before the second attempt; each later one doubles it, up to <see cref="MaxBackoff"/>.</summary>
    public TimeSpan InitialBackoff { get; init; } = TimeSpan.FromMilliseconds(2);

    /// <summary>The largest wait before any attempt.</summary>
    public TimeSpan MaxBackoff { get; init; } = TimeSpan.FromMilliseconds(200);

    /// <summary>No attempt starts later than this after the first one started.</summary>
    public TimeSpan OverallTimeout { get; init; } = TimeSpan.FromSeconds(30);

    /// <summary>Called with each transient abort that will be retried and the number of attempts made so far.</summary>
    public Action<TransactionAbortedException, int>? OnRetry { get; init; }

    /// <summary>Runs <paramref name="attempt"/> under this policy.</summary>
    internal async Task<T> RunAsync<T>(Func<Task<T>> attempt)
    {
        Validate();
        var started = Stopwatch.GetTimestamp();
        for (var attempts = 1; ; attempts++)
        {
            try
            {
                return await attempt();
            }
            catch (TransactionAbortedException abort) when (abort.IsTransient && attempts < MaxAttempts)
            {
                var wait = Backoff(attempts);
                if (Stopwatch.GetElapsedTime(started) + wait > OverallTimeout)
                {
                    throw;
                }

                OnRetry?.Invoke(abort, attempts);
                await Task.Delay(wait);
            }
        }
    }

    /// <summary>
    /// The wait after <paramref name="failedAttempts"/> attempts: uniform between zero and the doubled bound, so that
    /// transactions that gave way to each other do not meet again at the same moment.
    /// </summary>
    internal TimeSpan Backoff(int failedAttempts)
    {
        var bound = InitialBackoff.Ticks * Math.Pow(2, Math.Min(failedAttempts - 1, 30));
        return TimeSpan.FromTicks((long)(Random.Shared.NextDouble() * Math.Min(bound, MaxBackoff.Ticks)));
    }

    private void Validate()
    {
        if (MaxAttempts < 1 || InitialBackoff < TimeSpan.Zero || MaxBackoff < TimeSpan.Zero || OverallTimeout < TimeSpan.Zero)
        {
            throw new ArgumentException($"A retry policy needs at least one attempt and no negative time: {this}.");
        }
    }
}
