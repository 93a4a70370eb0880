namespace Snapper.Workloads;

/// <summary>The outcome of one transaction as a client saw it.</summary>
/// <param name="Committed">True when it committed.</param>
/// <param name="AbortReason">Why it aborted, when it did; a short, stable name such as "WaitDie".</param>
public readonly record struct RunOutcome(bool Committed, string? AbortReason)
{
    public static RunOutcome Commit { get; } = new(true, null);

    public static RunOutcome Abort(string reason) => new(false, reason);
}

/// <summary>Issues one transaction at a time for one client loop; a loop owns its driver and its random source.</summary>
public interface ITransactionDriver
{
    Task<RunOutcome> RunOneAsync();
}

/// <summary>
/// A benchmark workload at one parameter point, written for every <see cref="BenchmarkMode"/> it supports.
/// The runner prepares it once per mode, then drives it from several client loops.
/// </summary>
public interface IWorkload
{
    /// <summary>Short name, for CSV and charts ("smallbank", "tpcc").</summary>
    string Name { get; }

    /// <summary>The parameters of this point, in a stable order, for the CSV's params column.</summary>
    IReadOnlyList<KeyValuePair<string, string>> Parameters { get; }

    /// <summary>Parameters that only one mode uses (the hybrid PACT share), appended to <see cref="Parameters"/> for its rows.</summary>
    IReadOnlyList<KeyValuePair<string, string>> ModeParameters(BenchmarkMode mode) => [];

    /// <summary>The modes this workload can run in.</summary>
    IReadOnlyList<BenchmarkMode> Modes { get; }

    /// <summary>Loads the data this mode uses and activates its actors, so that measurement starts warm.</summary>
    Task PrepareAsync(IGrainFactory grains, BenchmarkMode mode, CancellationToken cancellationToken);

    /// <summary>A driver for one client loop, with its own deterministic random source.</summary>
    /// <param name="grains">The factory the driver's transactions go through.</param>
    /// <param name="mode">The mode the driver runs.</param>
    /// <param name="seed">Seeds the driver's random source.</param>
    /// <param name="loops">How many loops of <paramref name="mode"/> run at once, this one included: its transactions in flight.</param>
    ITransactionDriver CreateDriver(IGrainFactory grains, BenchmarkMode mode, int seed, int loops);

    /// <summary>Checks the workload's invariants after a run in <paramref name="mode"/>; returns what is wrong, or null.</summary>
    Task<string?> CheckConsistencyAsync(IGrainFactory grains, BenchmarkMode mode, CancellationToken cancellationToken);
}
