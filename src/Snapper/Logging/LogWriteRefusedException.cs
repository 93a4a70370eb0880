namespace Snapper.Logging;

/// <summary>
/// A logger refused an append because an earlier write failed: unlike a failed write, this one certainly wrote nothing,
/// so a commit refused this way is aborted, not in doubt.
/// </summary>
internal sealed class LogWriteRefusedException(string message, Exception earlierFailure) : IOException(message, earlierFailure);
