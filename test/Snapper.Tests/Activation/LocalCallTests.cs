using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using Microsoft.Extensions.DependencyInjection;
using Orleans;
using Orleans.Runtime;
using Orleans.TestingHost;
using Snapper.Hosting;
using Snapper.Tests.Actors;
using Xunit;

namespace Snapper.Tests.Activation;

/// <summary>
/// Calls inside a transaction between actors of one silo run on the callee's activation directly (local calls), in both
/// modes; an activation that ends under a local call waits for it, and the next activation serves from then on.
/// </summary>
public sealed class LocalCallTests : IAsyncLifetime
{
    private readonly ConcurrentQueue<GrainId> _localCalls = new();
    private readonly ConcurrentDictionary<GrainId, TaskCompletionSource> _ending = new();
    private InProcessTestCluster _local = null!;
    private InProcessTestCluster _orleansOnly = null!;

    public async Task InitializeAsync()
    {
        // Bounds far above what the staged steps take, so that no bound fires while a test holds a call.
        _local = await ClusterFixture.StartAsync(o =>
        {
            o.ExecutionTimeout = TimeSpan.FromSeconds(30);
            o.ParticipantTimeout = TimeSpan.FromSeconds(60);
            o.OutcomeRetention = TimeSpan.FromSeconds(120);
        }, new SnapperTestHooks { LocalCallStarted = _localCalls.Enqueue, LocalCallsEnding = actor => EndingBegun(actor).TrySetResult() });
        _orleansOnly = await ClusterFixture.StartAsync(o => o.LocalCalls = false, new SnapperTestHooks { LocalCallStarted = _localCalls.Enqueue });
    }

    public async Task DisposeAsync()
    {
        await _local.DisposeAsync();
        await _orleansOnly.DisposeAsync();
    }

    private int LocalCallsTo(IAddressable actor) => _localCalls.Count(id => id == actor.GetGrainId());

    private TaskCompletionSource EndingBegun(GrainId actor) =>
        _ending.GetOrAdd(actor, _ => new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously));

    [Theory]
    [InlineData(true, true)]
    [InlineData(true, false)]
    [InlineData(false, true)]
    [InlineData(false, false)]
    public async Task A_call_to_an_active_actor_of_the_same_silo_is_local_unless_switched_off(bool localCalls, bool pact)
    {
        var cluster = localCalls ? _local : _orleansOnly;
        var grains = cluster.Client;
        var (root, callee) = (grains.GetGrain<IProbe>(ClusterFixture.NewId()), grains.GetGrain<IProbe>(ClusterFixture.NewId()));
        await callee.StartTxn(callee.Increment, 1); // activates the callee; a call to an actor not active yet goes through Orleans
        using var counted = new LocalCallCounter(cluster.GetSiloServiceProvider().GetRequiredService<IMeterFactory>());

        for (var i = 0; i < 3; i++)
        {
            var input = new CallThenHold(callee.GetPrimaryKeyLong(), $"local-{localCalls}-{pact}-{i}-{root.GetPrimaryKeyLong()}");
            Gates.Release(input.Gate);
            await (pact ? root.StartTxn(root.CallThenHold, input, ActorAccessInfo.Of(root, callee)) : root.StartTxn(root.CallThenHold, input));
        }

        Assert.Equal(localCalls ? 3 : 0, LocalCallsTo(callee));

        // The silo's meter counts them by kind (Orleans' call metrics do not see them): an ACT's prepare and commit to the
        // callee, which wrote, are local too; a PACT has neither.
        var twoPhase = localCalls && !pact ? 3 : 0;
        Assert.Equal((localCalls ? 3 : 0, twoPhase, twoPhase), counted.Take());
        Assert.Equal(4, await callee.StartTxn(callee.Read, 0));
        Assert.Equal(3, await root.StartTxn(root.Read, 0));
    }

    /// <summary>
    /// The callee holds at a gate inside a local call while its activation is asked to end. Orleans does not see local
    /// calls, so without Snapper's wait the activation would end under the call and a new one would serve: here no new
    /// activation answers until the call returned, and the transaction then commits its write on the callee.
    /// </summary>
    [Theory]
    [InlineData(Ending.SelfDeactivate, true)]
    [InlineData(Ending.SelfDeactivate, false)]
    [InlineData(Ending.ExtensionDeactivate, true)]
    [InlineData(Ending.ExtensionDeactivate, false)]
    [InlineData(Ending.SelfMigrate, true)]
    [InlineData(Ending.SelfMigrate, false)]
    public async Task An_activation_ending_under_a_local_call_ends_only_after_it(Ending ending, bool pact)
    {
        var grains = _local.Client;
        var (root, callee) = (grains.GetGrain<IProbe>(ClusterFixture.NewId()), grains.GetGrain<IProbe>(ClusterFixture.NewId()));
        await callee.StartTxn(callee.Read, 0);
        var gate = $"ending-{ending}-{pact}-{root.GetPrimaryKeyLong()}";
        var input = new CallHold(callee.GetPrimaryKeyLong(), gate);
        var txn = pact ? root.StartTxn(root.CallHold, input, ActorAccessInfo.Of(root, callee)) : root.StartTxn(root.CallHold, input);
        await Gates.WhenReached(gate);
        Assert.Equal(1, LocalCallsTo(callee));

        var control = callee.Cast<IActivationControl>();
        var before = (await control.WhoAmI()).Activation;
        // Not awaited yet: the test cluster's DeactivateAsync returns only once the activation is gone.
        var ended = ending.Begin(_local, control);
        await EndingBegun(callee.GetGrainId()).Task.WaitAsync(TimeSpan.FromSeconds(30)); // Orleans has reached Snapper's stop step

        // Orleans holds calls to an activation that is ending until it is gone: none may name a new activation while the
        // local call runs (a call answered by the old activation before its end began is asked again).
        var next = control.WhoAmI();
        for (var round = 0; round < 10; round++)
        {
            if (await Task.WhenAny(next, Task.Delay(50)) == next)
            {
                Assert.Equal(before, (await next).Activation);
                next = control.WhoAmI();
            }
        }

        Gates.Release(gate);
        await txn;
        await ended;

        var after = (await next).Activation;
        if (after == before)
        {
            after = (await control.WhoAmI()).Activation;
        }

        Assert.NotEqual(before, after);
        Assert.Equal(1, await callee.StartTxn(callee.Read, 0));

        // The new activation takes local calls in its turn.
        await root.StartTxn(root.CallThenHold, Released(new CallThenHold(callee.GetPrimaryKeyLong(), gate + "-after")), ActorAccessInfo.Of(root, callee));
        Assert.Equal(2, LocalCallsTo(callee));
        Assert.Equal(2, await callee.StartTxn(callee.Read, 0));
    }

    /// <summary>
    /// The callee's activation begins to end while its held call is still to call another actor that calls it back:
    /// that call back is taken locally too (refused, it would go to Orleans, which holds it for the next activation,
    /// which waits for this one to end), the transaction commits, and the activation ends after it.
    /// </summary>
    [Fact]
    public async Task A_call_back_into_an_ending_activation_from_its_running_call_is_taken()
    {
        var grains = _local.Client;
        var ids = ClusterFixture.NewIds(3);
        var (root, callee, via) = (grains.GetGrain<IProbe>(ids[0]), grains.GetGrain<IProbe>(ids[1]), grains.GetGrain<IProbe>(ids[2]));
        await callee.StartTxn(callee.Read, 0);
        await via.StartTxn(via.Read, 0);
        var gate = $"call-back-{ids[0]}";
        var txn = root.StartTxn(root.CallHold, new CallHold(ids[1], gate, BackVia: ids[2]));
        await Gates.WhenReached(gate);

        var control = callee.Cast<IActivationControl>();
        var before = (await control.WhoAmI()).Activation;
        await control.DeactivateSelf();
        await EndingBegun(callee.GetGrainId()).Task.WaitAsync(TimeSpan.FromSeconds(30));
        Gates.Release(gate);
        await txn;

        Assert.Equal(2, LocalCallsTo(callee)); // the held call, and the call back into it while its activation ended
        Assert.Equal(2, await callee.StartTxn(callee.Read, 0)); // its own write and the call back's
        Assert.NotEqual(before, (await control.WhoAmI()).Activation);
    }

    /// <summary>
    /// A silo's core of an actor is replaced when the actor's state arrives there anew (a live migration back to it: the
    /// old core is forgotten and the next activation makes a new one). Here the activation holding the old core is still
    /// there, and a transaction reaches it, by a local call and then through Orleans: it must not write on the old core,
    /// which no version, commit or log record follows (the transaction would commit without its write). It is refused as
    /// a moving actor, StartTxn submits it again, and it commits on the current core.
    /// </summary>
    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task A_transaction_that_reaches_an_activation_whose_core_was_replaced_writes_on_the_current_core(bool pact)
    {
        var grains = _local.Client;
        var ids = ClusterFixture.NewIds(2);
        var (root, callee) = (grains.GetGrain<IProbe>(ids[0]), grains.GetGrain<IProbe>(ids[1]));
        await root.StartTxn(root.Read, 0);
        await callee.StartTxn(callee.Increment, 1);
        await root.StartTxn(root.CallThenHold, Released(new CallThenHold(ids[1], $"core-before-{ids[0]}"))); // the callee takes local calls now
        Assert.Equal(1, LocalCallsTo(callee));

        var runtime = _local.GetSiloServiceProvider().GetRequiredService<Snapper.Actors.SnapperRuntime>();
        var id = callee.GetGrainId();
        var old = runtime.Actors.GetOrAdd<ProbeState>(id, () => throw new InvalidOperationException("the callee has a core"));
        runtime.Actors.Remove(id);
        var current = runtime.Actors.GetOrAdd(id, () => new Snapper.Actors.ActorCore<ProbeState>(
            id, runtime, Microsoft.Extensions.Logging.Abstractions.NullLogger.Instance, new ProbeState { Value = 100 }, old.State.LastSeq));

        var input = Released(new CallThenHold(ids[1], $"core-replaced-{ids[0]}"));
        await (pact ? root.StartTxn(root.CallThenHold, input, ActorAccessInfo.Of(root, callee)) : root.StartTxn(root.CallThenHold, input));

        Assert.Equal(2, LocalCallsTo(callee)); // the refused attempt reached the old activation by a local call
        Assert.Equal(2, old.State.Committed.Value); // untouched since the replacement
        Assert.Equal(101, current.State.Committed.Value);
        Assert.Equal(101, await callee.StartTxn(callee.Read, 0));
        Assert.Equal(2, await root.StartTxn(root.Read, 0));
    }

    private static CallThenHold Released(CallThenHold input)
    {
        Gates.Release(input.Gate);
        return input;
    }
}

/// <summary>The silo's <c>snapper.calls.local</c> measurements, by kind.</summary>
internal sealed class LocalCallCounter : IDisposable
{
    private readonly MeterListener _listener = new();
    private long _calls;
    private long _prepares;
    private long _commits;

    public LocalCallCounter(IMeterFactory silo)
    {
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Meter.Scope == silo && instrument.Meter.Name == "Snapper" && instrument.Name == "snapper.calls.local")
            {
                listener.EnableMeasurementEvents(instrument);
            }
        };
        _listener.SetMeasurementEventCallback<long>((_, value, tags, _) =>
        {
            foreach (var tag in tags)
            {
                switch (tag is { Key: "kind" } ? tag.Value as string : null)
                {
                    case "call": Interlocked.Add(ref _calls, value); break;
                    case "prepare": Interlocked.Add(ref _prepares, value); break;
                    case "commit": Interlocked.Add(ref _commits, value); break;
                }
            }
        });
        _listener.Start();
    }

    public (long Calls, long Prepares, long Commits) Take() =>
        (Interlocked.Exchange(ref _calls, 0), Interlocked.Exchange(ref _prepares, 0), Interlocked.Exchange(ref _commits, 0));

    public void Dispose() => _listener.Dispose();
}

/// <summary>
/// Orleans counts only its own messages as activity: an actor that only local calls reach must not be collected as
/// idle while they keep coming (it would be, after the collection age, without Snapper's keep-alive).
/// </summary>
public sealed class LocalCallKeepAliveTests
{
    private static readonly TimeSpan CollectionAge = TimeSpan.FromSeconds(10);

    [Fact]
    public async Task An_actor_reached_only_by_local_calls_outlives_its_collection_age()
    {
        var localCalls = new ConcurrentQueue<GrainId>();
        var cluster = await ClusterFixture.StartAsync(_ => { }, new SnapperTestHooks { LocalCallStarted = localCalls.Enqueue },
            configureSilo: silo => silo.Configure<Orleans.Configuration.GrainCollectionOptions>(o =>
            {
                o.CollectionQuantum = TimeSpan.FromSeconds(1);
                o.CollectionAge = CollectionAge;
            }));
        try
        {
            var grains = cluster.Client;
            var (root, callee) = (grains.GetGrain<IProbe>(ClusterFixture.NewId()), grains.GetGrain<IProbe>(ClusterFixture.NewId()));
            var control = callee.Cast<IActivationControl>();
            var first = (await control.WhoAmI()).Activation;
            await callee.StartTxn(callee.Increment, 1); // its first call into a transaction: it takes local calls from now on

            // Two and a half collection ages of PACTs whose only call to the callee is local (without the keep-alive it is
            // collected after one age and a quantum, and the next call goes through Orleans to a new activation).
            var transactions = 0;
            var until = DateTime.UtcNow + 2.5 * CollectionAge;
            while (DateTime.UtcNow < until)
            {
                await root.StartTxn(root.TouchEach, new[] { callee.GetPrimaryKeyLong() }, ActorAccessInfo.Of(root, callee));
                transactions++;
            }

            Assert.Equal(transactions, localCalls.Count(id => id == callee.GetGrainId()));
            Assert.Equal(first, (await control.WhoAmI()).Activation);
        }
        finally
        {
            await cluster.DisposeAsync();
        }
    }

    /// <summary>
    /// The keep-alive follows the collection age Orleans applies to the actor's class, and never shortens a longer
    /// keep-alive the actor asked for itself. The silo's own age is an hour and the probes' class age 10 s: `collected`,
    /// reached only by a local call, is collected after about twice that (with the silo's age it would stay two hours);
    /// `kept`, reached by the same call, asked to be kept an hour and is still the same activation after that.
    /// </summary>
    [Fact]
    public async Task The_keep_alive_follows_the_class_collection_age_and_keeps_a_longer_one_the_actor_asked_for()
    {
        var quantum = TimeSpan.FromSeconds(1);
        var localCalls = new ConcurrentQueue<GrainId>();
        var ended = new ConcurrentDictionary<GrainId, TaskCompletionSource>();
        TaskCompletionSource Ended(GrainId actor) => ended.GetOrAdd(actor, _ => new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously));
        var cluster = await ClusterFixture.StartAsync(_ => { },
            new SnapperTestHooks { LocalCallStarted = localCalls.Enqueue, LocalCallsEnding = actor => Ended(actor).TrySetResult() },
            configureSilo: silo => silo.Configure<Orleans.Configuration.GrainCollectionOptions>(o =>
            {
                o.CollectionQuantum = quantum;
                o.CollectionAge = TimeSpan.FromHours(1);
                o.ClassSpecificCollectionAge[typeof(Probe).FullName!] = CollectionAge;
            }));
        try
        {
            var grains = cluster.Client;
            var (root, collected, kept) = (grains.GetGrain<IProbe>(ClusterFixture.NewId()), grains.GetGrain<IProbe>(ClusterFixture.NewId()),
                grains.GetGrain<IProbe>(ClusterFixture.NewId()));
            await kept.StartTxn(kept.Increment, 1);
            await kept.Cast<IActivationControl>().KeepAliveFor(TimeSpan.FromHours(1));
            var keptActivation = (await kept.Cast<IActivationControl>().WhoAmI()).Activation;
            await collected.StartTxn(collected.Increment, 1); // both take local calls from now on

            await root.StartTxn(root.TouchEach, new[] { collected.GetPrimaryKeyLong(), kept.GetPrimaryKeyLong() }, ActorAccessInfo.Of(root, collected, kept));
            Assert.Equal(1, localCalls.Count(id => id == collected.GetGrainId()));
            Assert.Equal(1, localCalls.Count(id => id == kept.GetGrainId()));

            // Collected after its class's age and the local call's keep-alive, not the silo's hour (bounded far above both).
            await Ended(collected.GetGrainId()).Task.WaitAsync(TimeSpan.FromSeconds(90));

            // A negative check: `kept` had the same local call at the same moment, so without its own hour it would be
            // collected in the same pass or the next; the delay only gives that wrong collection the time to show.
            await Task.Delay(2 * quantum);
            Assert.False(Ended(kept.GetGrainId()).Task.IsCompleted, "the local call's keep-alive replaced the hour the actor asked for");
            Assert.Equal(keptActivation, (await kept.Cast<IActivationControl>().WhoAmI()).Activation);
        }
        finally
        {
            await cluster.DisposeAsync();
        }
    }
}
