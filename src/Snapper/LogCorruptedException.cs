namespace Snapper;

/// <summary>
/// A write-ahead log segment or checkpoint is damaged somewhere other than a segment's torn tail, so recovery cannot tell what was
/// committed. The silo does not start; restore the file or move it aside knowingly.
/// </summary>
public sealed class LogCorruptedException(string path, long offset, string problem)
    : SnapperException($"Write-ahead log file '{path}' is damaged at offset {offset}: {problem}. Recovery stopped so that no wrong state is loaded.")
{
    /// <summary>The damaged file.</summary>
    public string Path { get; } = path;

    /// <summary>Where in the file the damaged frame starts.</summary>
    public long Offset { get; } = offset;

    /// <summary>What is wrong there, without the file and offset.</summary>
    public string Problem { get; } = problem;
}
