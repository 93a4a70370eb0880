namespace Snapper;

/// <summary>
/// A transaction needed a silo of the cluster that is not active: the worker that hosts one of its actors, or the master
/// that orders transactions spanning workers. Nothing of the transaction ran; retry once the silo is back.
/// </summary>
[GenerateSerializer, Alias("snapper.worker-unavailable")]
public sealed class WorkerUnavailableException : SnapperException
{
    /// <summary>Creates the exception.</summary>
    public WorkerUnavailableException(string silo, string detail)
        : base($"Snapper's {silo} is not available: {detail}")
    {
        Silo = silo;
    }

    /// <summary>Which silo was needed ("worker 1", "master").</summary>
    [Id(0)] public string Silo { get; private set; }
}
