namespace Snapper;

/// <summary>Base type of every error Snapper raises.</summary>
[GenerateSerializer, Alias("snapper.ex")]
public class SnapperException : Exception
{
    /// <summary>Creates the exception.</summary>
    public SnapperException(string message, Exception? innerException = null) : base(message, innerException) { }
}
