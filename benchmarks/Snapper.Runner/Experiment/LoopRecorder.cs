namespace Snapper.Runner.Experiment;

/// <summary>
/// What one client loop observed, per epoch. Each loop writes only its own recorder, so recording takes no
/// lock; the runner reads the counters for progress while loops run and everything once they stopped.
/// </summary>
internal sealed class LoopRecorder
{
    private readonly long[] _committed;
    private readonly long[] _aborted;
    private readonly List<double>[] _latenciesMs;
    private readonly Dictionary<string, long>[] _abortsByReason;

    public LoopRecorder(int epochs)
    {
        _committed = new long[epochs];
        _aborted = new long[epochs];
        _latenciesMs = Enumerable.Range(0, epochs).Select(_ => new List<double>()).ToArray();
        _abortsByReason = Enumerable.Range(0, epochs).Select(_ => new Dictionary<string, long>()).ToArray();
    }

    public void Commit(int epoch, double latencyMs)
    {
        _latenciesMs[epoch].Add(latencyMs);
        Volatile.Write(ref _committed[epoch], _committed[epoch] + 1);
    }

    public void Abort(int epoch, string reason)
    {
        _abortsByReason[epoch][reason] = _abortsByReason[epoch].GetValueOrDefault(reason) + 1;
        Volatile.Write(ref _aborted[epoch], _aborted[epoch] + 1);
    }

    public long CommittedIn(int epoch) => Volatile.Read(ref _committed[epoch]);

    public long AbortedIn(int epoch) => Volatile.Read(ref _aborted[epoch]);

    public IReadOnlyList<double> LatenciesIn(int epoch) => _latenciesMs[epoch];

    public IReadOnlyDictionary<string, long> AbortsIn(int epoch) => _abortsByReason[epoch];
}
