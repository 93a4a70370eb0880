namespace Snapper;

/// <summary>
/// A write-ahead log segment is damaged somewhere other than its torn tail, so recovery cannot tell what was
/// committed. The silo does not start; restore the file or move it aside knowingly.
/// </summary>
public sealed class LogCorruptedException(string path, long offset, string problem)
    : SnapperException($"Write-ahead log segment '{path}' is damaged at offset {offset}: {problem}. Recovery stopped so that no wrong state is loaded.")
{
    /// <summary>The damaged segment file.</summary>
    public string Path { get; } = path;

    /// <summary>Where in the file the damaged frame starts.</summary>
    public long Offset { get; } = offset;
}
