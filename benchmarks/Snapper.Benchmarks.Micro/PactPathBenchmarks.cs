using BenchmarkDotNet.Attributes;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Orleans.Metadata;
using Snapper.Actors;
using Snapper.Hosting;
using Snapper.Hybrid;
using Snapper.Pact;
using Snapper.Scheduling;

namespace Snapper.Benchmarks.Micro;

/// <summary>
/// What one PACT costs an actor's schedule: its sub-batch delivered, its turn taken, its method's exit, the batch's
/// commit. Every actor a PACT declares pays this once (a SmallBank MultiTransfer: five times), under the schedule's lock.
/// </summary>
[MemoryDiagnoser]
public class ScheduleBenchmarks
{
    /// <summary>The PACT service as a schedule sees it, doing nothing: the schedule's own cost only.</summary>
    internal sealed class NoBatches : IBatchStatus, IBatchCompletionSink
    {
        public long ResolvedBid { get; set; }

        public BatchPosition EmissionFrontier(BatchPosition atLeast) => atLeast;

        public Task<bool> WhenResolvedAsync(long bid) => Task.FromResult(true);

        public bool IsResolved(BatchPosition position) => true;

        public void SubBatchCompleted(long bid, GrainId actor, CompletedVersion version)
        {
        }
    }

    private readonly NoBatches _batches = new();
    private ActorSchedule _schedule = null!;
    private long _bid;

    [GlobalSetup]
    public void Setup() => _schedule = new ActorSchedule(GrainId.Create("bench", "a"), _batches, _batches, HybridScheduling.SerializabilityCheck);

    // Each batch's prev_bid is the one before, committed and resolved: its PACT has the turn at once.
    [Benchmark]
    public Task OnePactBatch() => RunOnePact(_schedule, ++_bid, _bid - 1, _batches);

    /// <summary>A one-PACT sub-batch <paramref name="bid"/> through <paramref name="schedule"/>: delivered, its turn, exit, finish, commit.</summary>
    internal static Task RunOnePact(ActorSchedule schedule, long bid, long prevBid, NoBatches batches)
    {
        schedule.Deliver(bid, prevBid, [(bid, 1)]);
        var turn = schedule.EnterAsync(bid);
        schedule.Exit(bid);
        schedule.Finish(bid);
        schedule.Commit(bid);
        batches.ResolvedBid = bid;
        return turn;
    }
}

/// <summary>
/// The same steps as <see cref="ScheduleBenchmarks"/>, each time on another of 100,000 schedules, in a shuffled order:
/// what a PACT's actor pays when, as in SmallBank's 10,000 accounts beside their grains and Orleans' own structures,
/// its schedule has left the processor's caches since its last PACT. The difference to the warm benchmark is the cost
/// of the memory a schedule touches.
/// </summary>
[MemoryDiagnoser]
public class ColdScheduleBenchmarks
{
    private const int Schedules = 100_000;
    private readonly ScheduleBenchmarks.NoBatches _batches = new();
    private ActorSchedule[] _schedules = null!;
    private int[] _order = null!;
    private long[] _lastBid = null!;
    private int _next;
    private long _bid;

    [GlobalSetup]
    public void Setup()
    {
        _schedules = Enumerable.Range(0, Schedules)
            .Select(i => new ActorSchedule(GrainId.Create("bench", i.ToString()), _batches, _batches, HybridScheduling.SerializabilityCheck))
            .ToArray();
        _order = Enumerable.Range(0, Schedules).OrderBy(_ => Random.Shared.Next()).ToArray();
        _lastBid = Enumerable.Repeat(-1L, Schedules).ToArray();

        // One PACT on each first, as the runner's warm-up does: the schedules' own structures exist already.
        for (var i = 0; i < Schedules; i++)
        {
            OnePactBatch();
        }
    }

    [Benchmark]
    public Task OnePactBatch()
    {
        var index = _order[_next++ % Schedules];
        var prevBid = _lastBid[index];
        _lastBid[index] = ++_bid;
        return ScheduleBenchmarks.RunOnePact(_schedules[index], _bid, prevBid, _batches);
    }
}

/// <summary>
/// A reference to Snapper's internal call interface of an actor, made for every call between actors: through
/// <c>GetGrain&lt;T&gt;(GrainId)</c>, which resolves the interface type from the CLR type each time, against the
/// interface type resolved once (what <c>SnapperRuntime.Callee</c> does).
/// </summary>
[MemoryDiagnoser]
public class GrainReferenceBenchmarks
{
    private IHost _client = null!;
    private IGrainFactory _grains = null!;
    private GrainInterfaceType _callee;
    private GrainId _actor;

    [GlobalSetup]
    public void Setup()
    {
        // A client host that is never started: its grain factory makes references without a connection.
        _client = Host.CreateDefaultBuilder().UseOrleansClient(client => client.UseLocalhostClustering()).Build();
        _grains = _client.Services.GetRequiredService<IGrainFactory>();
        _callee = _client.Services.GetRequiredService<GrainInterfaceTypeResolver>().GetGrainInterfaceType(typeof(IActorCallee));
        _actor = GrainId.Create("bench", "a");
    }

    [GlobalCleanup]
    public void Cleanup() => _client.Dispose();

    [Benchmark(Baseline = true)]
    public object ResolvedEachTime() => _grains.GetGrain<IActorCallee>(_actor);

    [Benchmark]
    public object ResolvedOnce() => (IActorCallee)_grains.GetGrain(_actor, _callee);
}

/// <summary>
/// The token holder grouping a batch's accesses by actor before delivering them: three SmallBank MultiTransfer PACTs of
/// five actors each (the batch size of 8 in flight), into a dictionary and a list per actor made for the batch, against
/// the builder the token keeps from batch to batch.
/// </summary>
[MemoryDiagnoser]
public class SubBatchGroupingBenchmarks
{
    private readonly SubBatchBuilder _builder = new();
    private GrainId[][] _pacts = null!;

    [GlobalSetup]
    public void Setup() => _pacts = Enumerable.Range(0, 3)
        .Select(p => Enumerable.Range(0, 5).Select(a => GrainId.Create("bench", $"{p}-{a}")).ToArray())
        .ToArray();

    [Benchmark(Baseline = true)]
    public int FreshPerBatch()
    {
        var subBatches = new Dictionary<GrainId, List<PactAccess>>(15);
        for (var p = 0; p < _pacts.Length; p++)
        {
            foreach (var actor in _pacts[p])
            {
                if (!subBatches.TryGetValue(actor, out var list))
                {
                    subBatches[actor] = list = new List<PactAccess>(1);
                }

                list.Add(new PactAccess(p, 1));
            }
        }

        GrainId[] participants = [.. subBatches.Keys];
        return participants.Length;
    }

    [Benchmark]
    public int KeptOnTheToken()
    {
        _builder.Clear();
        for (var p = 0; p < _pacts.Length; p++)
        {
            foreach (var actor in _pacts[p])
            {
                _builder.Add(actor, new PactAccess(p, 1));
            }
        }

        return _builder.Participants().Length;
    }
}

/// <summary>
/// Finding the schedules of one SmallBank MultiTransfer PACT (five actors) among 10,000 actors' schedules, in a shuffled
/// order so that the map's entries have left the caches, as between two PACTs on the same accounts: by looking each one up
/// in the map the PACT service keeps (what emission and finishing each did before e914658), against reading the array the
/// PACT's ticket carries (what they do now; its submitter looked them up once).
/// </summary>
[MemoryDiagnoser]
public class ScheduleLookupBenchmarks
{
    private const int Actors = 10_000;
    private const int PerPact = 5;
    private readonly System.Collections.Concurrent.ConcurrentDictionary<GrainId, ActorSchedule> _schedules = new();
    private readonly ScheduleBenchmarks.NoBatches _batches = new();
    private GrainId[][] _pacts = null!;
    private ActorSchedule[][] _tickets = null!;
    private int _next;

    [GlobalSetup]
    public void Setup()
    {
        var ids = Enumerable.Range(0, Actors).Select(i => GrainId.Create("bench", i.ToString())).ToArray();
        foreach (var id in ids)
        {
            _schedules[id] = new ActorSchedule(id, _batches, _batches, HybridScheduling.SerializabilityCheck);
        }

        var order = ids.OrderBy(_ => Random.Shared.Next()).ToArray();
        _pacts = order.Chunk(PerPact).ToArray();
        _tickets = _pacts.Select(pact => pact.Select(id => _schedules[id]).ToArray()).ToArray();
    }

    [Benchmark(Baseline = true)]
    public long LookedUpInTheMap()
    {
        var pact = _pacts[_next++ % _pacts.Length];
        var sum = 0L;
        foreach (var actor in pact)
        {
            sum += _schedules[actor].LastEmittedBid;
        }

        return sum;
    }

    [Benchmark]
    public long ReadFromTheTicket()
    {
        var pact = _tickets[_next++ % _tickets.Length];
        var sum = 0L;
        foreach (var schedule in pact)
        {
            sum += schedule.LastEmittedBid;
        }

        return sum;
    }
}

/// <summary>
/// A PACT's submitter finds the schedules of the five actors it declares; its first method then calls four of them, each
/// call finding the callee's activation. The callee was found in a second map of every actor (<c>InASecondMap</c>); now
/// it is kept on the schedule the submission just found (<c>OnTheSchedule</c>). Each PACT writes over 8 KB of a 64 MB
/// buffer, what a SmallBank PACT allocates, so that between two PACTs on one actor (every 2,000 PACTs) 16 MB stream
/// through the caches, as the silo's allocations do; <c>StreamOnly</c> is that part alone. The keys looked up are copies
/// of the stored ones (equal content, other arrays), as a user's ids are.
/// </summary>
[MemoryDiagnoser]
public class LocalCalleeLookupBenchmarks
{
    private const int Actors = 10_000;
    private const int PerPact = 5;
    private const int Streamed = 8 << 10;
    private readonly System.Collections.Concurrent.ConcurrentDictionary<GrainId, ActorSchedule> _schedules = new();
    private readonly System.Collections.Concurrent.ConcurrentDictionary<GrainId, ILocalCallee> _callees = new();
    private readonly ScheduleBenchmarks.NoBatches _batches = new();
    private readonly byte[] _heap = new byte[64 << 20];
    private GrainId[][] _pacts = null!;
    private int _next;
    private int _streamAt;

    private sealed class Callee : ILocalCallee
    {
        public Task<CallResponse>? TryCallLocal(CallRequest request) => null;

        public Task<Act.PrepareResult>? TryPrepareLocal(Act.ActPhaseRequest request) => null;

        public Task? TryCommitLocal(Act.ActPhaseRequest request) => null;
    }

    [GlobalSetup]
    public void Setup()
    {
        for (var i = 0; i < Actors; i++)
        {
            var id = GrainId.Create("bench", i.ToString());
            var callee = new Callee();
            var schedule = new ActorSchedule(id, _batches, _batches, HybridScheduling.SerializabilityCheck);
            schedule.ServeLocalCalls(callee);
            _schedules[id] = schedule;
            _callees[id] = callee;
        }

        _pacts = Enumerable.Range(0, Actors).OrderBy(_ => Random.Shared.Next())
            .Select(i => GrainId.Create("bench", i.ToString())).Chunk(PerPact).ToArray();
    }

    private GrainId[] NextPact()
    {
        // This PACT's allocations: 8 KB written, a different stretch each time.
        _heap.AsSpan(_streamAt, Streamed).Fill((byte)_next);
        _streamAt = (_streamAt + Streamed) % _heap.Length;
        return _pacts[_next++ % _pacts.Length];
    }

    // The submission's lookups, the same in both variants.
    private int FindSchedules(GrainId[] pact)
    {
        var found = 0;
        foreach (var actor in pact)
        {
            found += _schedules.TryGetValue(actor, out var schedule) && schedule.LastEmittedBid == -1 ? 1 : 0;
        }

        return found;
    }

    [Benchmark]
    public int StreamOnly() => NextPact().Length;

    [Benchmark(Baseline = true)]
    public int InASecondMap()
    {
        var pact = NextPact();
        var found = FindSchedules(pact);
        for (var i = 1; i < pact.Length; i++)
        {
            found += _callees.TryGetValue(pact[i], out var callee) && callee is not null ? 1 : 0;
        }

        return found;
    }

    [Benchmark]
    public int OnTheSchedule()
    {
        var pact = NextPact();
        var found = FindSchedules(pact);
        for (var i = 1; i < pact.Length; i++)
        {
            found += _schedules.TryGetValue(pact[i], out var schedule) && schedule.LocalCallee is not null ? 1 : 0;
        }

        return found;
    }
}
