using System.Collections.Concurrent;
using Snapper;

namespace Snapper.Tests.Serializability;

/// <summary>Shape of a randomized workload: few hot actors, many cold ones, 1-8 accesses per transaction.</summary>
public sealed record RandomWorkloadShape(
    int HotActors = 4,
    int ColdActors = 40,
    double HotProbability = 0.6,
    int MaxAccesses = 8,
    double WriteProbability = 0.6,
    double RepeatProbability = 0.15,
    double ParallelProbability = 0.5,
    double UserAbortProbability = 0.05,
    double PactFraction = 0,
    bool Keyed = false,
    bool Mirrored = false,
    bool KeyLevel = false);

/// <summary>
/// Generates seeded random transactions over <see cref="HistoryActor"/>s, runs them concurrently as ACTs or, for
/// a <see cref="RandomWorkloadShape.PactFraction"/> of them, as PACTs declaring exactly the accesses their plan
/// makes, and collects the history for <see cref="HistoryChecker"/>. A failure reproduces from its seed. With
/// <see cref="RandomWorkloadShape.Keyed"/> the history's actors are keys of <see cref="KeyedHistoryActor"/>s; with
/// <see cref="RandomWorkloadShape.Mirrored"/> as well, each key has a replica on another actor (an update dependency),
/// which only forwarding writes and some reads read instead of the key: the replica is one more object of the history,
/// written by exactly the transactions that write its leader, in the same transaction. With
/// <see cref="RandomWorkloadShape.KeyLevel"/> (ids from <see cref="KeyedHistoryActor.KeyLevelTargets"/> on), the actors
/// use key-level concurrency control and PACTs declare the keys they use.
/// </summary>
public sealed class RandomHistory(IGrainFactory grains, long firstActor, RandomWorkloadShape shape)
{
    /// <summary>How many transactions aborted for each reason, for the test output.</summary>
    public ConcurrentDictionary<AbortReason, int> AbortReasons { get; } = new();

    /// <summary>
    /// The first abort of each reason that blames the transaction's own code (every history transaction awaits its calls,
    /// calls only what it declared and only methods that exist), printed whole: such an abort points at timing in Snapper.
    /// </summary>
    public ConcurrentDictionary<AbortReason, TransactionAbortedException> BlamingTheCode { get; } = new();

    /// <summary>Added to a key's id for its replica's: a key of another grain (the offset is a multiple of the keys per grain).</summary>
    public const long MirrorOffset = 1L << 40;

    private IEnumerable<long> Leaders => Enumerable.Range(0, shape.HotActors + shape.ColdActors).Select(i => firstActor + i);

    public IEnumerable<long> Actors => shape.Mirrored ? Leaders.Concat(Leaders.Select(id => id + MirrorOffset)) : Leaders;

    private static bool IsMirror(long id) => id >= MirrorOffset;

    /// <summary>Creates every key and makes each replica follow its key.</summary>
    private async Task SetUpMirrorsAsync()
    {
        foreach (var grain in Leaders.GroupBy(id => KeyedHistoryActor.Locate(id).Grain))
        {
            var actor = grains.GetGrain<IKeyedHistoryActor>(grain.Key);
            await UntilCommitted(() => actor.StartTxn(actor.Seed, grain.Select(id => KeyedHistoryActor.Locate(id).Key).ToArray()));
        }

        foreach (var id in Leaders)
        {
            var (grain, key) = KeyedHistoryActor.Locate(id);
            var mirror = grains.GetGrain<IKeyedHistoryActor>(KeyedHistoryActor.Locate(id + MirrorOffset).Grain);
            await UntilCommitted(() => mirror.StartTxn(mirror.Mirror, new MirrorOf(grain, key)));
        }
    }

    /// <summary>
    /// Runs a set-up or final-read transaction again while it aborts (an aborted attempt left nothing behind): with tight
    /// bounds, one may give way to a bound like any transaction of the history, and a final read may meet, under wait-die,
    /// the lock of an older history transaction whose abort has not yet reached every participant (presumed abort releases
    /// participants' locks asynchronously).
    /// </summary>
    private static Task UntilCommitted(Func<Task> transaction) => UntilCommitted(async () =>
    {
        await transaction();
        return true;
    });

    /// <inheritdoc cref="UntilCommitted(Func{Task})"/>
    private static async Task<T> UntilCommitted<T>(Func<Task<T>> transaction)
    {
        for (var attempt = 1; ; attempt++)
        {
            try
            {
                return await transaction();
            }
            catch (TransactionAbortedException) when (attempt < 20)
            {
                await Task.Delay(10 * attempt);
            }
        }
    }

    public async Task<(IReadOnlyList<RecordedTxn> History, IReadOnlyDictionary<long, long[]> Final)> RunAsync(
        int seed, int transactions, int concurrency, long firstTxnId)
    {
        if (shape.Mirrored)
        {
            await SetUpMirrorsAsync();
        }

        var random = new Random(seed);
        var plans = Enumerable.Range(0, transactions)
            .Select(i => (Plan: Plan(random, firstTxnId + i), Pact: random.NextDouble() < shape.PactFraction))
            .ToArray();
        var history = new ConcurrentBag<RecordedTxn>();
        var next = -1;
        await Task.WhenAll(Enumerable.Range(0, concurrency).Select(async _ =>
        {
            int index;
            while ((index = Interlocked.Increment(ref next)) < plans.Length)
            {
                var ((root, step), pact) = plans[index];
                try
                {
                    var observations = await RunOneAsync(root, step, pact);
                    history.Add(new RecordedTxn(step.Txn, true, observations, pact ? "PACT" : "ACT"));
                }
                catch (TransactionAbortedException aborted)
                {
                    AbortReasons.AddOrUpdate(aborted.Reason, 1, static (_, n) => n + 1);
                    if (aborted.Reason is AbortReason.UnawaitedCall or AbortReason.InvalidCall or AbortReason.UndeclaredAccess)
                    {
                        BlamingTheCode.TryAdd(aborted.Reason, aborted);
                    }
                    history.Add(new RecordedTxn(step.Txn, false, []));
                }
            }
        }));

        var final = new Dictionary<long, long[]>();
        foreach (var id in Actors)
        {
            if (shape.Keyed)
            {
                var (grain, key) = KeyedHistoryActor.Locate(id);
                var keyed = grains.GetGrain<IKeyedHistoryActor>(grain);
                final[id] = await UntilCommitted(() => keyed.StartTxn(keyed.Writers, key));
            }
            else
            {
                var actor = grains.GetGrain<IHistoryActor>(id);
                final[id] = await UntilCommitted(() => actor.StartTxn(actor.Writers, 0));
            }
        }

        return (history.ToArray(), final);
    }

    private Task<Observation[]> RunOneAsync(long root, Step step, bool pact)
    {
        if (shape.Keyed)
        {
            var keyed = grains.GetGrain<IKeyedHistoryActor>(KeyedHistoryActor.Locate(root).Grain);
            return pact ? keyed.StartTxn(keyed.Execute, step, Declare(root, step)) : keyed.StartTxn(keyed.Execute, step);
        }

        var actor = grains.GetGrain<IHistoryActor>(root);
        return pact ? actor.StartTxn(actor.Execute, step, Declare(root, step)) : actor.StartTxn(actor.Execute, step);
    }

    /// <summary>The grain behind one of the history's actors.</summary>
    private IAddressable GrainOf(long actor) => shape.Keyed
        ? grains.GetGrain<IKeyedHistoryActor>(KeyedHistoryActor.Locate(actor).Grain)
        : grains.GetGrain<IHistoryActor>(actor);

    /// <summary>
    /// Exactly the accesses the plan makes: the first actor once, one per call to each child actor, and one to a key's
    /// replica per write of the key; at key level, with the key each access uses.
    /// </summary>
    private ActorAccessInfo Declare(long root, Step step)
    {
        var info = new ActorAccessInfo();
        var pending = new Stack<(long Actor, Step Step)>([(root, step)]);
        while (pending.TryPop(out var entry))
        {
            var (actor, current) = entry;
            Access(info, actor, current.Target);
            if (shape.Mirrored && current.Write)
            {
                Access(info, current.Target + MirrorOffset, current.Target + MirrorOffset); // the write is forwarded to the replica
            }

            for (var i = 0; i < current.Children.Length; i++)
            {
                pending.Push((current.ChildActors[i], current.Children[i]));
            }
        }

        return info;
    }

    /// <summary>One access to the grain of <paramref name="actor"/>, using the key of <paramref name="target"/> there.</summary>
    private void Access(ActorAccessInfo info, long actor, long target)
    {
        info.Add(GrainOf(actor));
        if (shape.KeyLevel)
        {
            info.AddKeys(GrainOf(actor), KeyedHistoryActor.Locate(target).Key);
        }
    }

    private (long Root, Step Step) Plan(Random random, long txn)
    {
        var budget = random.Next(1, shape.MaxAccesses + 1);
        var used = new List<long>();
        var root = PickActor(random, used);
        var fail = random.NextDouble() < shape.UserAbortProbability ? random.Next(budget) : -1;
        var counter = 0;
        return (root, Build(random, txn, root, ref budget, used, ref counter, fail));
    }

    private Step Build(Random random, long txn, long target, ref int budget, List<long> used, ref int counter, int failAt)
    {
        budget--;
        var fails = counter++ == failAt;
        var children = new List<Step>();
        var childActors = new List<long>();
        var wanted = budget > 0 ? random.Next(0, Math.Min(3, budget) + 1) : 0;
        for (var i = 0; i < wanted && budget > 0; i++)
        {
            var child = Build(random, txn, PickActor(random, used), ref budget, used, ref counter, failAt);
            childActors.Add(child.Target);
            children.Add(child);
        }

        var write = random.NextDouble() < shape.WriteProbability;
        var parallel = random.NextDouble() < shape.ParallelProbability;
        if (shape.Mirrored && !write && random.NextDouble() < 0.4)
        {
            target += MirrorOffset; // read the replica instead (only forwarding writes it)
        }

        return new Step(txn, write, [.. children], [.. childActors], parallel, fails, Target: target);
    }

    private long PickActor(Random random, List<long> used)
    {
        long actor;
        if (used.Count > 0 && random.NextDouble() < shape.RepeatProbability)
        {
            actor = used[random.Next(used.Count)];
        }
        else if (random.NextDouble() < shape.HotProbability)
        {
            actor = firstActor + random.Next(shape.HotActors);
        }
        else
        {
            actor = firstActor + shape.HotActors + random.Next(shape.ColdActors);
        }

        used.Add(actor);
        return actor;
    }
}
