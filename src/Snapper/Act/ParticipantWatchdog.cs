using System.Buffers;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Snapper.Diagnostics;
using Snapper.Hosting;

namespace Snapper.Act;

/// <summary>
/// An activation of a transactional actor as the participant watchdog sees it: something to check in its own turns.
/// </summary>
/// <remarks>
/// The watchdog runs on a timer thread, outside Orleans' scheduler, so the only thing it may do with an activation is
/// queue work onto it. It never asks an activation about its own life cycle (that takes the activation's lock from
/// outside Orleans): an activation leaves the list itself, in its own deactivation (<see cref="Actors.ActorCore{TState}.Release"/>).
/// </remarks>
internal interface IWatchedActivation
{
    /// <summary>Queues one check of its ACTs and remembered outcomes onto the activation's own scheduler.</summary>
    void QueueWatch();
}

/// <summary>
/// One timer per silo that bounds how long ACT participants wait (ParticipantTimeout before they prepare,
/// DecisionTimeout after), sends commits again that a participant did not acknowledge, and prunes the outcomes actors
/// remember (see <see cref="ActParticipant{TState}.Watch"/>).
/// </summary>
/// <remarks>
/// Invariants:
/// <list type="bullet">
/// <item>An actor is on the list while it has an activation and something to watch: an ACT running on it, or an outcome
/// it remembers. The actor's own turns add and remove it (<see cref="Actors.ActorCore{TState}"/>), so the list holds the
/// actors with ACTs in flight, not every actor an ACT ever reached. An activation that ends leaves the list; the next one
/// joins it again, and until then nothing waits on the actor (whatever does reaches it by a message, which activates it).</item>
/// <item>Every actor on the list is checked once a period, a quarter of the shorter of the two timeouts, so a wait
/// outlives its bound by at most a period plus the time its activation takes to run the check. The check runs in one of
/// the actor's turns (the watchdog only queues it), as everything that touches an actor's ACTs does.</item>
/// <item>Rounds never overlap: a timer tick that finds the last round still running is skipped. A round only copies the
/// list and queues work, so a skipped tick means the process is starved, and piling more rounds onto it would only
/// starve it further.</item>
/// </list>
/// This replaces a grain timer per actor: under a load of ACTs every actor they reached started a timer that stopped
/// at its first idle tick, thousands of timers made, fired and dropped a second, and each lived past a collection.
/// </remarks>
internal sealed class ParticipantWatchdog : IDisposable
{
    private readonly object _gate = new();
    private readonly HashSet<IWatchedActivation> _watched = new(ReferenceEqualityComparer.Instance);
    private readonly ILogger<ParticipantWatchdog> _logger;
    private readonly ITimer _timer;
    private int _roundRunning;
    private int _skippedTicks;

    public ParticipantWatchdog(IOptions<SnapperOptions> options, SnapperMetrics metrics, ILogger<ParticipantWatchdog> logger, TimeProvider time)
    {
        _logger = logger;
        var bound = Math.Min(options.Value.ParticipantTimeout.Ticks, options.Value.DecisionTimeout.Ticks);
        Period = TimeSpan.FromTicks(Math.Max(TimeSpan.FromMilliseconds(1).Ticks, bound / 4));
        _timer = time.CreateTimer(_ => Round(), null, Period, Period);
        metrics.ObserveEntries("act.watched", "Actors the participant watchdog checks: ACTs running on them, or outcomes they remember.", () => Count);
    }

    /// <summary>How often every actor on the list is checked.</summary>
    public TimeSpan Period { get; }

    /// <summary>Actors on the list now.</summary>
    public int Count
    {
        get
        {
            lock (_gate)
            {
                return _watched.Count;
            }
        }
    }

    public void Add(IWatchedActivation activation)
    {
        lock (_gate)
        {
            _watched.Add(activation);
        }
    }

    public void Remove(IWatchedActivation activation)
    {
        lock (_gate)
        {
            _watched.Remove(activation);
        }
    }

    public void Dispose() => _timer.Dispose();

    /// <summary>One tick of the timer: queues a check on every actor on the list, unless the last tick's round still runs.</summary>
    internal void Round()
    {
        if (Interlocked.Exchange(ref _roundRunning, 1) == 1)
        {
            // Said once per stuck round, not once per tick: the round that is still running is the news.
            if (Interlocked.Increment(ref _skippedTicks) == 1)
            {
                _logger.LogWarning("The participant watchdog's last round has not finished after {Period}; ticks are skipped until it does (the silo is starved of threads or CPU)", Period);
            }

            return;
        }

        try
        {
            QueueRound();
        }
        finally
        {
            if (Interlocked.Exchange(ref _skippedTicks, 0) is var skipped and > 0)
            {
                _logger.LogWarning("The participant watchdog's round finished after {Skipped} skipped ticks", skipped);
            }

            Volatile.Write(ref _roundRunning, 0);
        }
    }

    private void QueueRound()
    {
        IWatchedActivation[] round;
        int count;
        lock (_gate)
        {
            count = _watched.Count;
            if (count == 0)
            {
                return;
            }

            round = ArrayPool<IWatchedActivation>.Shared.Rent(count);
            _watched.CopyTo(round);
        }

        try
        {
            for (var i = 0; i < count; i++)
            {
                try
                {
                    round[i].QueueWatch();
                }
                catch (Exception exception)
                {
                    // A timer callback must not throw (it would end the process); the actor is checked again next round.
                    _logger.LogError(exception, "The participant watchdog could not queue a check on {Activation}", round[i]);
                }
            }
        }
        finally
        {
            ArrayPool<IWatchedActivation>.Shared.Return(round, clearArray: true);
        }
    }
}
