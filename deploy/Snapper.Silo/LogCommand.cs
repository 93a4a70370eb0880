using System.Globalization;
using Snapper.Logging;

namespace Snapper.Silo;

/// <summary>
/// <c>Snapper.Silo log DIR [--actor ID] [--state]</c>: prints what a silo's data folder (its <c>--data</c> folder, or
/// the <c>snapper</c> folder in it) holds, without changing it: its checkpoints, every log record, and damage. With
/// <c>--actor</c>, only that actor's checkpoint entries, its state records, and the decisions of the transactions and
/// batches that wrote it; with <c>--state</c>, each state in hex.
/// </summary>
internal static class LogCommand
{
    public const string Name = "log";

    public static int Run(IReadOnlyList<string> args, TextWriter output, TextWriter error)
    {
        string? folder = null, actor = null;
        var withState = false;
        for (var i = 0; i < args.Count; i++)
        {
            switch (args[i])
            {
                case "--actor" when i + 1 < args.Count:
                    actor = args[++i];
                    break;
                case "--state":
                    withState = true;
                    break;
                case var path when folder is null && !path.StartsWith("--", StringComparison.Ordinal):
                    folder = path;
                    break;
                default:
                    error.WriteLine($"Snapper silo log: unexpected argument '{args[i]}'. Usage: log DIR [--actor ID] [--state]");
                    return 2;
            }
        }

        if (folder is null)
        {
            error.WriteLine("Snapper silo log: name the data folder. Usage: log DIR [--actor ID] [--state]");
            return 2;
        }

        // This silo keeps Snapper's log in the "snapper" folder of its --data folder: either may be named.
        var own = Path.Combine(folder, "snapper");
        if (Directory.Exists(own) && Directory.GetDirectories(folder, "logger-*").Length == 0)
        {
            folder = own;
        }

        LogFolderDump dump;
        try
        {
            dump = LogFolderDump.Read(folder);
        }
        catch (DirectoryNotFoundException missing)
        {
            error.WriteLine($"Snapper silo log: {missing.Message}");
            return 2;
        }

        Print(dump, actor, withState, output);
        return dump.Damage.Count == 0 ? 0 : 1;
    }

    private static void Print(LogFolderDump dump, string? actor, bool withState, TextWriter output)
    {
        foreach (var checkpoint in dump.Checkpoints)
        {
            var cut = string.Join(", ", checkpoint.Cut.OrderBy(c => c.Key, StringComparer.Ordinal).Select(c => $"{c.Key} segment {c.Value}"));
            output.WriteLine(Invariant($"checkpoint {checkpoint.Number} ({checkpoint.File}): {checkpoint.Actors.Count} actors, {checkpoint.Undecided} undecided records; the log after it starts at {(cut.Length == 0 ? "the first segment" : cut)}"));
            foreach (var entry in checkpoint.Actors.Where(a => actor is null || a.Actor == actor))
            {
                output.WriteLine(Invariant($"  {entry.Actor}  seq {entry.StateSeq} (max {entry.MaxSeq})  {Size(entry.State)}{(entry.Incremental ? " key-value" : "")}{Hex(entry.State, withState)}"));
            }
        }

        // With an actor: its state records, and the decisions about the transactions and batches that wrote them.
        var writers = actor is null
            ? null
            : dump.Records.Where(r => r.Actor == actor).Select(r => (r.Kind, r.Id)).ToHashSet();
        string? segment = null;
        foreach (var record in dump.Records)
        {
            if (writers is not null && !(record.Actor == actor || record.Actor is null && writers.Contains((record.Kind, record.Id))))
            {
                continue;
            }

            if (record.Segment != segment)
            {
                segment = record.Segment;
                output.WriteLine(segment);
            }

            var state = record.Actor is null
                ? ""
                : Invariant($"  {record.Actor}  seq {record.Seq}  {Size(record.State)}{(record.Decider is null ? "" : $"  decided by {record.Decider}")}{Hex(record.State, withState)}");
            output.WriteLine(Invariant($"  #{record.Index}  {record.Type} {record.Kind} {record.Id}{state}"));
        }

        foreach (var damage in dump.Damage)
        {
            output.WriteLine(Invariant($"damaged: {damage.File} from offset {damage.Offset}: {damage.Problem}"));
        }
    }

    private static string Size(byte[]? state) => state is null ? "no state" : Invariant($"{state.Length} B");

    private static string Hex(byte[]? state, bool withState) => withState && state is not null ? "  " + Convert.ToHexString(state) : "";

    private static string Invariant(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);
}
