using System.Globalization;
using Snapper.Workloads;

namespace Snapper.Runner.Cluster;

/// <summary>
/// Chooses each transaction's actors by the cluster worker that hosts them (thesis §4.4.1.2): <c>dist%</c> of the
/// transactions take their actors from <c>distlevel</c> distinct workers, at least one from each, the rest all from one
/// worker; the worker or workers are picked uniformly. Within a worker the actors are drawn with the run's skew over
/// that worker's own accounts, so each worker has its own hot set (or Zipf head).
/// </summary>
/// <remarks>
/// A worker hosts the actors whose grain id hashes to it (<c>GetUniformHashCode() % workers</c>, Snapper's default
/// placement, which SmallBank's accounts keep), so the split is computed from the grain ids the client's factory gives.
/// Plain Orleans grains (NT, Orleans Transactions) are placed by Orleans, not by this hash: their transactions get the
/// same account sets, but which silos those span is Orleans' choice.
/// </remarks>
public sealed class WorkerKeyChoice : IKeyChoice
{
    private readonly int _actors;
    private readonly int _workers;
    private readonly double _distPercent;
    private readonly int _distLevel;
    private readonly Func<int, KeySampler> _samplerOver;
    private readonly Func<IGrainFactory, long, GrainId> _actorId;
    private readonly object _gate = new();
    private (IGrainFactory Grains, Chooser Chooser)? _bound;

    /// <param name="actors">Accounts, indexes 0 to actors - 1.</param>
    /// <param name="workers">Workers in the cluster (what its silos were started with).</param>
    /// <param name="distPercent">Share of transactions spanning workers, in percent.</param>
    /// <param name="distLevel">Workers a distributed transaction spans; at least 2, at most <paramref name="workers"/>.</param>
    /// <param name="samplerOver">The skewed draw over a worker's accounts, given how many it has.</param>
    /// <param name="actorId">The grain id of the transactional actor with an index, as the silos place it.</param>
    public WorkerKeyChoice(int actors, int workers, double distPercent, int distLevel, Func<int, KeySampler> samplerOver, Func<IGrainFactory, long, GrainId> actorId)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(workers, 1);
        if (distPercent is < 0 or > 100)
        {
            throw new ArgumentException($"--dist-percent must be from 0 to 100 (was {distPercent}).");
        }

        if (distPercent > 0 && (distLevel < 2 || distLevel > workers))
        {
            throw new ArgumentException($"--txn-dist-level must be from 2 to the {workers} worker(s) for distributed transactions (was {distLevel}).");
        }

        _actors = actors;
        _workers = workers;
        _distPercent = distPercent;
        _distLevel = distLevel;
        _samplerOver = samplerOver;
        _actorId = actorId;
        Parameters =
        [
            new("dist", distPercent.ToString(CultureInfo.InvariantCulture)),
            new("distlevel", distLevel.ToString(CultureInfo.InvariantCulture)),
        ];
    }

    public IReadOnlyList<KeyValuePair<string, string>> Parameters { get; }

    /// <summary>Splits the accounts by worker once per grain factory; every client loop shares the split.</summary>
    public IKeyChooser Bind(IGrainFactory grains)
    {
        lock (_gate)
        {
            if (_bound is { } bound && bound.Grains == grains)
            {
                return bound.Chooser;
            }

            var chooser = new Chooser(this, AccountsByWorker(grains));
            _bound = (grains, chooser);
            return chooser;
        }
    }

    private int[][] AccountsByWorker(IGrainFactory grains)
    {
        var byWorker = Enumerable.Range(0, _workers).Select(_ => new List<int>()).ToArray();
        for (var account = 0; account < _actors; account++)
        {
            byWorker[(int)(_actorId(grains, account).GetUniformHashCode() % (uint)_workers)].Add(account);
        }

        return byWorker.Select(list => list.ToArray()).ToArray();
    }

    /// <summary>The draw of one client loop's transactions; its state is read-only, so the loops share it.</summary>
    private sealed class Chooser : IKeyChooser
    {
        private readonly WorkerKeyChoice _choice;
        private readonly int[][] _accounts;
        private readonly KeySampler[] _samplers;

        public Chooser(WorkerKeyChoice choice, int[][] accounts)
        {
            _choice = choice;
            _accounts = accounts;
            for (var w = 0; w < accounts.Length; w++)
            {
                if (accounts[w].Length == 0)
                {
                    throw new InvalidOperationException($"Worker {w} of {accounts.Length} hosts none of the {choice._actors} accounts; use more accounts.");
                }
            }

            _samplers = accounts.Select(a => choice._samplerOver(a.Length)).ToArray();
        }

        public int[] NextDistinct(Random random, int count)
        {
            if (random.NextDouble() * 100 < _choice._distPercent)
            {
                return Distributed(random, count);
            }

            var worker = random.Next(_accounts.Length);
            return From(worker, random, count, new int[count], 0);
        }

        /// <summary>
        /// The transaction's actors spread over distlevel distinct workers: one from each, the others on workers
        /// picked uniformly among those. The first actor (where the transaction starts) is on the first worker picked.
        /// </summary>
        private int[] Distributed(Random random, int count)
        {
            var level = _choice._distLevel;
            if (count < level)
            {
                throw new InvalidOperationException($"A transaction of {count} actors cannot span {level} workers; lower --txn-dist-level or raise --txnsize.");
            }

            var workers = Enumerable.Range(0, _accounts.Length).ToArray();
            for (var i = 0; i < level; i++)
            {
                var j = random.Next(i, workers.Length);
                (workers[i], workers[j]) = (workers[j], workers[i]);
            }

            var perWorker = new int[level];
            Array.Fill(perWorker, 1);
            for (var extra = level; extra < count; extra++)
            {
                perWorker[random.Next(level)]++;
            }

            var picked = new int[count];
            var at = 0;
            for (var i = 0; i < level; i++)
            {
                From(workers[i], random, perWorker[i], picked, at);
                at += perWorker[i];
            }

            return picked;
        }

        /// <summary>Draws <paramref name="count"/> distinct accounts of one worker into <paramref name="into"/> from <paramref name="at"/>.</summary>
        private int[] From(int worker, Random random, int count, int[] into, int at)
        {
            var accounts = _accounts[worker];
            if (count > accounts.Length)
            {
                throw new InvalidOperationException($"Worker {worker} hosts {accounts.Length} accounts, fewer than the {count} a transaction takes from it; use more accounts.");
            }

            var indexes = _samplers[worker].NextDistinct(random, count);
            for (var i = 0; i < count; i++)
            {
                into[at + i] = accounts[indexes[i]];
            }

            return into;
        }
    }
}
