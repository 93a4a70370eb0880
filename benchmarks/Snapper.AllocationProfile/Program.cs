using System.Diagnostics.Tracing;
using Microsoft.Diagnostics.NETCore.Client;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Analysis;
using Microsoft.Diagnostics.Tracing.Etlx;
using Microsoft.Diagnostics.Tracing.Parsers;
using Microsoft.Diagnostics.Tracing.Parsers.Clr;
using TraceLog = Microsoft.Diagnostics.Tracing.Etlx.TraceLog; // the Analysis namespace has a TraceLog of its own

// Where a running .NET process allocates, from the runtime's GC AllocationTick events: one event about every 100 KB
// allocated, naming the type of the object that crossed the mark and the stack that allocated it. Over a few seconds
// of a steady load the events are a fair sample of the bytes allocated, by type and by stack.
//
//   collect PID SECONDS FILE.nettrace      listens to the process for SECONDS
//   report FILE.nettrace [FRAME] [TOP]     shares of the sampled bytes: by type; by the innermost frame whose name
//                                          contains FRAME (default "Snapper"); by type and its four innermost frames
//   gcs FILE.nettrace                      the collections in the same events, by generation: how many, how long
//                                          the process was paused, and how much survived (TraceEvent's GC analysis)
return args switch
{
    ["collect", var pid, var seconds, var file] => await CollectAsync(int.Parse(pid), TimeSpan.FromSeconds(double.Parse(seconds)), file),
    ["gcs", var file] => Collections(file),
    ["report", var file, .. var rest] => Report(file, rest.Length > 0 ? rest[0] : "Snapper", rest.Length > 1 ? int.Parse(rest[1]) : 40),
    _ => Usage(),
};

static int Usage()
{
    Console.Error.WriteLine("usage: collect PID SECONDS FILE.nettrace | report FILE.nettrace [FRAME] [TOP] | gcs FILE.nettrace");
    return 2;
}

static async Task<int> CollectAsync(int pid, TimeSpan duration, string file)
{
    // GC at Verbose carries AllocationTick; Loader and Jit let the stacks be named (with the rundown at the end).
    var keywords = ClrTraceEventParser.Keywords.GC | ClrTraceEventParser.Keywords.Loader | ClrTraceEventParser.Keywords.Jit;
    var providers = new[] { new EventPipeProvider(ClrTraceEventParser.ProviderName, EventLevel.Verbose, (long)keywords) };
    using var session = new DiagnosticsClient(pid).StartEventPipeSession(providers, requestRundown: true);
    await using var output = File.Create(file);
    var copy = session.EventStream.CopyToAsync(output);
    await Task.Delay(duration);
    session.Stop();
    await copy;
    return 0;
}

static int Report(string file, string frameFilter, int top)
{
    using var log = TraceLog.OpenOrConvert(TraceLog.CreateFromEventPipeDataFile(file));
    var byType = new Dictionary<string, double>();
    var byFrame = new Dictionary<string, double>();
    var byStack = new Dictionary<string, double>();
    double total = 0;
    foreach (var traced in log.Events)
    {
        if (traced is not GCAllocationTickTraceData tick)
        {
            continue;
        }

        double bytes = tick.AllocationAmount64;
        total += bytes;
        var frames = new List<string>();
        for (var frame = tick.CallStack(); frame is not null; frame = frame.Caller)
        {
            if (frame.CodeAddress.FullMethodName is { Length: > 0 } name)
            {
                frames.Add(name);
            }
        }

        Add(byType, tick.TypeName, bytes);
        Add(byFrame, frames.FirstOrDefault(f => f.Contains(frameFilter, StringComparison.Ordinal)) ?? "(none)", bytes);
        Add(byStack, $"{tick.TypeName}  <-  {string.Join(" < ", frames.Take(4))}", bytes);
    }

    Console.WriteLine($"sampled {total / 1e6:F1} MB in {file}");
    Print("by type", byType);
    Print($"by the innermost frame containing \"{frameFilter}\"", byFrame);
    Print("by type and its four innermost frames", byStack);
    return 0;

    void Print(string title, Dictionary<string, double> shares)
    {
        Console.WriteLine($"== {title}");
        foreach (var (key, bytes) in shares.OrderByDescending(p => p.Value).Take(top))
        {
            Console.WriteLine($"{bytes / total * 100,6:F2}%  {key}");
        }
    }

    static void Add(Dictionary<string, double> shares, string key, double bytes) =>
        shares[key] = shares.GetValueOrDefault(key) + bytes;
}

static int Collections(string file)
{
    using var source = new EventPipeEventSource(file);
    source.NeedLoadedDotNetRuntimes();
    source.Process();
    foreach (var process in source.Processes())
    {
        if (process.LoadedDotNetRuntime() is not { } runtime || runtime.GC.GCs.Count == 0)
        {
            continue;
        }

        var gcs = runtime.GC.GCs;
        var seconds = (gcs[^1].StartRelativeMSec - gcs[0].StartRelativeMSec) / 1000;
        Console.WriteLine($"{process.Name} ({process.ProcessID}): {gcs.Count} collections over {seconds:F1} s");
        Console.WriteLine("gen  count  pause mean  pause max  promoted mean  reasons");
        foreach (var generation in gcs.GroupBy(gc => gc.Generation).OrderBy(g => g.Key))
        {
            var reasons = string.Join(", ", generation.GroupBy(gc => gc.Reason).Select(r => $"{r.Key} {r.Count()}"));
            Console.WriteLine($"{generation.Key,3}  {generation.Count(),5}  {generation.Average(gc => gc.PauseDurationMSec),7:F2} ms" +
                $"  {generation.Max(gc => gc.PauseDurationMSec),6:F2} ms  {generation.Average(gc => gc.PromotedMB),9:F2} MB  {reasons}");
        }
    }

    return 0;
}
