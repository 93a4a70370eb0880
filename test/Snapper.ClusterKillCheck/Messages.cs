namespace Snapper.ClusterKillCheck;

internal static class Messages
{
    /// <summary>An exception message's first line, cut to a length a report line can hold.</summary>
    public static string FirstLine(string message)
    {
        var line = message.Split('\n', 2)[0].Trim();
        return line.Length <= 240 ? line : line[..240] + "...";
    }
}
