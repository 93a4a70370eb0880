using System.Diagnostics;
using Serilog.Events;

namespace Snapper.Workloads.Logging;

/// <summary>
/// Recognizes a false alarm Orleans' silo watchdog raises as a silo starts: "Participant check thread has not completed
/// for 01:24:02 ...", where the time given is how long the machine has been up. Its platform thread starts checking
/// before the component thread's first timestamp is set, so the first check measures from timestamp zero (Orleans 10.4,
/// <c>Watchdog.Start</c>). A real stall cannot be longer than this process has lived: only such a warning is dropped.
/// </summary>
public static class WatchdogStartAlarm
{
    private const string Template = "Participant check thread has not completed";

    private static readonly DateTime ProcessStart = Process.GetCurrentProcess().StartTime.ToUniversalTime();

    /// <summary>For <c>Filter.ByExcluding</c>: whether <paramref name="logEvent"/> is that start-up false alarm.</summary>
    public static bool IsFalseAlarm(LogEvent logEvent) =>
        logEvent.MessageTemplate.Text.StartsWith(Template, StringComparison.Ordinal)
        && logEvent.Properties.TryGetValue("TimeSinceLastTick", out var value)
        && value is ScalarValue { Value: TimeSpan stalled }
        && stalled > DateTime.UtcNow - ProcessStart;
}
