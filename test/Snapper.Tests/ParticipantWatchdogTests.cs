using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.Time.Testing;
using Orleans.TestingHost;
using Snapper.Act;
using Snapper.Diagnostics;
using Snapper.Hosting;
using Snapper.Tests.Activation;
using Snapper.Tests.Actors;
using Xunit;

namespace Snapper.Tests;

/// <summary>
/// The silo's participant watchdog: which actors it watches, and that it still bounds a participant's wait. Each test
/// runs a silo of its own, so that its ACTs are the only ones the watchdog sees.
/// </summary>
public sealed class ParticipantWatchdogTests
{
    [Fact]
    public async Task Only_actors_with_acts_in_flight_are_watched()
    {
        // Bounds far beyond the test's own steps, so nothing here times out however slow the machine is.
        await using var cluster = await ClusterFixture.StartAsync(o =>
        {
            o.ExecutionTimeout = TimeSpan.FromSeconds(60);
            o.ParticipantTimeout = TimeSpan.FromSeconds(90);
            o.OutcomeRetention = TimeSpan.FromMinutes(5);
        });
        var watchdog = cluster.GetSiloServiceProvider().GetRequiredService<ParticipantWatchdog>();
        IProbe Probe(long id) => cluster.Client.GetGrain<IProbe>(id);
        var ids = ClusterFixture.NewIds(2);
        var gate = $"watched-{ids[0]}";

        // The first actor calls the second, then holds: the second is a participant with an ACT in flight.
        var held = Probe(ids[0]).StartTxn(Probe(ids[0]).CallThenHold, new CallThenHold(ids[1], gate));
        try
        {
            await Gates.WhenReached(gate);
            Assert.Equal(1, watchdog.Count);
        }
        finally
        {
            Gates.Release(gate);
        }

        await held.WaitAsync(TimeSpan.FromSeconds(30));
        Assert.Equal(0, watchdog.Count); // the participant ended at its commit, and the first actor forgot the acknowledged outcome

        // Many actors reached, none left watched once their ACTs ended: the list follows the ACTs in flight.
        var many = ClusterFixture.NewIds(40);
        await Task.WhenAll(Enumerable.Range(0, 20).Select(i =>
            Probe(many[2 * i]).StartTxn(Probe(many[2 * i]).TouchEach, new[] { many[2 * i + 1] }).WaitAsync(TimeSpan.FromSeconds(30))));
        Assert.Equal(0, watchdog.Count);
    }

    [Fact]
    public async Task A_call_that_reaches_a_participant_which_gave_up_on_the_act_aborts_it_with_a_transient_reason()
    {
        // Bounds far beyond the test's own steps: the first actor's own bound never fires here, only the hook's give-up.
        var hooks = new SnapperTestHooks();
        await using var cluster = await ClusterFixture.StartAsync(o =>
        {
            o.ExecutionTimeout = TimeSpan.FromSeconds(60);
            o.ParticipantTimeout = TimeSpan.FromSeconds(90);
            o.OutcomeRetention = TimeSpan.FromMinutes(5);
        }, hooks);
        IProbe Probe(long id) => cluster.Client.GetGrain<IProbe>(id);
        var ids = ClusterFixture.NewIds(2);
        var (first, participant) = (ids[0], ids[1]);
        var participantActor = Probe(participant).GetGrainId();
        var gate = $"gave-up-{first}";
        var gaveUp = new TaskCompletionSource<long>(TaskCreationOptions.RunContinuationsAsynchronously);
        hooks.ActTrace = (actor, tid, what) =>
        {
            if (actor == participantActor && what.StartsWith("aborts on its own", StringComparison.Ordinal))
            {
                gaveUp.TrySetResult(tid);
            }
        };

        // The first actor increments the participant, holds, then calls it again. While it holds, the participant gives up
        // on the ACT (as its watchdog does past ParticipantTimeout; under load the first actor's bound can fire later).
        var held = Probe(first).StartTxn(Probe(first).CallThenHold, new CallThenHold(participant, gate, ThenCallAgain: true));
        try
        {
            var tid = await Gates.WhenReached(gate);
            hooks.ParticipantGivesUp = (actor, t) => actor == participantActor && t == tid;
            Assert.Equal(tid, await gaveUp.Task.WaitAsync(TimeSpan.FromSeconds(30)));
        }
        finally
        {
            hooks.ParticipantGivesUp = null;
            Gates.Release(gate);
        }

        // The second call finds the ACT aborted there: timing, not the ACT's code, so the reason is a transient one that a
        // RetryPolicy retries (it was InvalidCall, which blames the code and is not retried).
        var abort = await Assert.ThrowsAsync<TransactionAbortedException>(() => held.WaitAsync(TimeSpan.FromSeconds(30)));
        Assert.Equal(AbortReason.ParticipantTimeout, abort.Reason);
        Assert.True(abort.IsTransient);
        Assert.Equal(0, await Probe(participant).StartTxn(Probe(participant).Read, 0).WaitAsync(TimeSpan.FromSeconds(30)));
        Assert.Equal(0, await Probe(first).StartTxn(Probe(first).Read, 0).WaitAsync(TimeSpan.FromSeconds(30)));
    }

    [Fact]
    public async Task A_prepared_participant_that_never_hears_the_commit_asks_for_it_and_frees_its_lock()
    {
        var hooks = new SnapperTestHooks();
        await using var cluster = await ClusterFixture.StartAsync(o => o.DecisionTimeout = TimeSpan.FromMilliseconds(500), hooks);
        var watchdog = cluster.GetSiloServiceProvider().GetRequiredService<ParticipantWatchdog>();
        var runtime = cluster.GetSiloServiceProvider().GetRequiredService<Snapper.Actors.SnapperRuntime>();
        IProbe Probe(long id) => cluster.Client.GetGrain<IProbe>(id);
        var ids = ClusterFixture.NewIds(2);
        var (first, participant) = (ids[0], ids[1]);
        var (firstActor, participantActor) = (Probe(first).GetGrainId(), Probe(participant).GetGrainId());
        var gate = $"withheld-{first}";
        Gates.Release(gate); // the first actor does not hold here
        var tid = new TaskCompletionSource<long>(TaskCreationOptions.RunContinuationsAsynchronously);
        hooks.ActTrace = (actor, t, what) =>
        {
            if (actor == firstActor && what.StartsWith("begins", StringComparison.Ordinal))
            {
                tid.TrySetResult(t);
            }
        };

        // The first actor commits, but its commit message to the participant is withheld (and so is every repeat of it):
        // the participant stays prepared, holding its lock, until the watchdog has it ask the first actor (Resolve).
        hooks.WithholdActCommit = p => p == participantActor;
        try
        {
            await Probe(first).StartTxn(Probe(first).CallThenHold, new CallThenHold(participant, gate)).WaitAsync(TimeSpan.FromSeconds(30));

            // A younger ACT on the participant dies on its lock (wait-die) until the participant has learned the outcome.
            var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(60);
            while (true)
            {
                try
                {
                    await Probe(participant).StartTxn(Probe(participant).Increment, 10).WaitAsync(TimeSpan.FromSeconds(30));
                    break;
                }
                catch (TransactionAbortedException) when (DateTime.UtcNow < deadline)
                {
                    await Task.Delay(50);
                }
            }

            // Answering the question did not close the commit: a question of the participant that arrives only now (the
            // watchdog asks every round, and an earlier answer may still be on its way) hears "committed" again, never
            // the "aborted" of presumed abort that would make the participant drop its write.
            var late = await runtime.Participant(firstActor).Resolve(runtime.CallKeys.Own, await tid.Task, participantActor).WaitAsync(TimeSpan.FromSeconds(30));
            Assert.Equal(TxnOutcome.Committed, late);
            Assert.True(watchdog.Count >= 1, "the first actor still holds the commit open");
        }
        finally
        {
            hooks.WithholdActCommit = null;
        }

        Assert.Equal(11, await Probe(participant).StartTxn(Probe(participant).Read, 0)); // the withheld commit, then the younger ACT
        Assert.Equal(1, await Probe(first).StartTxn(Probe(first).Read, 0));

        // The commit is sent again now that it gets through; the participant, already committed, acknowledges it, and that
        // closes it: nothing is left to watch.
        await Staged.Until(() => watchdog.Count == 0, "the repeated commit acknowledged");
    }

    [Theory]
    [InlineData(Ending.SelfDeactivate)]
    [InlineData(Ending.ExtensionDeactivate)]
    [InlineData(Ending.SelfMigrate)]
    public async Task An_activation_that_ends_leaves_the_list_and_the_next_one_watches_the_act_in_flight(Ending ending)
    {
        // Bounds so long that no round of the watchdog runs during the test (its period is a quarter of the shorter one):
        // whoever is on the list, the actors put there themselves.
        await using var cluster = await ClusterFixture.StartAsync(o =>
        {
            o.ExecutionTimeout = TimeSpan.FromSeconds(60);
            o.ParticipantTimeout = TimeSpan.FromHours(1);
            o.DecisionTimeout = TimeSpan.FromHours(1);
            o.OutcomeRetention = TimeSpan.FromHours(3);
        });
        var watchdog = cluster.GetSiloServiceProvider().GetRequiredService<ParticipantWatchdog>();
        IProbe Probe(long id) => cluster.Client.GetGrain<IProbe>(id);
        var ids = ClusterFixture.NewIds(2);
        var gate = $"ending-watched-{ending}-{ids[0]}";

        var held = Probe(ids[0]).StartTxn(Probe(ids[0]).CallThenHold, new CallThenHold(ids[1], gate));
        try
        {
            await Gates.WhenReached(gate);
            Assert.Equal(1, watchdog.Count);

            // The participant's activation ends with the ACT in flight, and nothing calls the actor for a while: its
            // deactivation takes it off the list (a watchdog that kept it would queue checks onto an activation that is gone).
            var control = Probe(ids[1]).Cast<IActivationControl>();
            var before = await control.WhoAmI();
            await ending.Begin(cluster, control); // SelfMigrate, with one silo: deactivates, and comes back on the same silo when called

            var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
            while (watchdog.Count != 0 && DateTime.UtcNow < deadline)
            {
                await Task.Delay(10);
            }

            Assert.Equal(0, watchdog.Count);

            // The next call makes the next activation, which continues the ACT and watches it again.
            var after = await control.WhoAmI();
            Assert.NotEqual(before.Activation, after.Activation);
            Assert.Equal(1, watchdog.Count);
        }
        finally
        {
            Gates.Release(gate);
        }

        await held.WaitAsync(TimeSpan.FromSeconds(30));
        Assert.Equal(0, watchdog.Count);
        Assert.Equal(1, await Probe(ids[1]).StartTxn(Probe(ids[1]).Read, 0));
    }

    [Fact]
    public async Task A_tick_while_the_last_round_still_runs_is_skipped()
    {
        var time = new FakeTimeProvider();
        var options = Options.Create(new SnapperOptions { ParticipantTimeout = TimeSpan.FromSeconds(4), DecisionTimeout = TimeSpan.FromSeconds(4) });
        using var watchdog = new ParticipantWatchdog(options, new SnapperMetrics(), NullLogger<ParticipantWatchdog>.Instance, time);
        var stuck = new StuckActivation();
        watchdog.Add(stuck);

        // The first round stops inside the activation's QueueWatch, on a thread of its own. (The rounds are run here by
        // hand until the end: the fake clock would not overlap a timer's callbacks, as a system timer does.)
        var first = Task.Run(watchdog.Round);
        Assert.True(stuck.Entered.Wait(TimeSpan.FromSeconds(30)));

        // Two more ticks come while it is stuck: each finds the round running and returns at once, queueing nothing.
        await Task.Run(() =>
        {
            watchdog.Round();
            watchdog.Round();
        }).WaitAsync(TimeSpan.FromSeconds(30));
        Assert.Equal(1, stuck.Queued);

        // Once the round is done, the next tick runs a round again.
        stuck.Release.Set();
        await first.WaitAsync(TimeSpan.FromSeconds(30));
        watchdog.Round();
        Assert.Equal(2, stuck.Queued);

        // And the ticks are the given clock's: a period later, its timer runs a round.
        time.Advance(watchdog.Period);
        Assert.Equal(3, stuck.Queued);
    }

    /// <summary>An activation whose first QueueWatch blocks until released.</summary>
    private sealed class StuckActivation : IWatchedActivation
    {
        private int _queued;

        public ManualResetEventSlim Entered { get; } = new();

        public ManualResetEventSlim Release { get; } = new();

        public int Queued => Volatile.Read(ref _queued);

        public void QueueWatch()
        {
            if (Interlocked.Increment(ref _queued) == 1)
            {
                Entered.Set();
                Release.Wait(TimeSpan.FromSeconds(60));
            }
        }
    }
}
