namespace Snapper.Runner.ScaleOut;

/// <summary>The steps of the scale-out scenario, in order (thesis §4.4.6).</summary>
public enum ScaleOutPhase
{
    /// <summary>The first seconds of load, while the silos' and the runner's code warms up; not compared.</summary>
    Warmup,

    /// <summary>The load on the home workers only.</summary>
    Before,

    /// <summary>The new workers start (deploy/cluster-start.sh --add), on the same cores as the running ones.</summary>
    Adding,

    /// <summary>The actors are spread over all workers (ActorMigration.RebalanceAsync) while the load runs.</summary>
    Migrating,

    /// <summary>The load on all workers, every actor where the rebalance put it.</summary>
    After,
}

/// <summary>How the scenario runs.</summary>
/// <param name="Steady">How long the load runs before the workers are added (after a warm-up of a third of it), and again after the migrations ended.</param>
/// <param name="Pipelines">Transactions in flight per mode (the modes run together).</param>
/// <param name="Seed">Seed of the client loops.</param>
/// <param name="ClusterFolder">The cluster's folder (deploy/cluster-start.sh --data).</param>
/// <param name="AddSilos">The silos to add, as cluster-start.sh --silos takes them (worker:2,worker:3).</param>
/// <param name="Parallelism">Migrations under way at once.</param>
public sealed record ScaleOutSettings(
    TimeSpan Steady, IReadOnlyDictionary<Workloads.BenchmarkMode, int> Pipelines, int Seed, string ClusterFolder, string AddSilos, int Parallelism);
