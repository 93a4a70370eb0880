namespace Snapper.Diagnostics;

/// <summary>
/// The name of the meter Snapper publishes its counters on, for <c>dotnet-counters monitor --counters Snapper</c> and
/// for OpenTelemetry (<c>AddMeter(SnapperMeter.Name)</c>).
/// </summary>
public static class SnapperMeter
{
    /// <summary>"Snapper".</summary>
    public const string Name = "Snapper";
}
