using BenchmarkDotNet.Attributes;
using Snapper.Logging;

namespace Snapper.Benchmarks.Micro;

/// <summary>
/// The state record a PACT batch queues on the ordered logger for each actor it wrote (a SmallBank MultiTransfer writes
/// five), from the state's serialized bytes to the payloads the logger takes: through a record object named by the
/// actor's <see cref="GrainId"/> ("record", what every batch paid before), against the payload written straight from its
/// parts with the actor's name made once per actor ("direct", what the PACT service does now).
/// </summary>
[MemoryDiagnoser]
public class StateRecordBenchmarks
{
    private static readonly GrainId Actor = GrainId.Create("snapperaccount", "4711");
    private static readonly string ActorName = Actor.ToString();

    // About what an account's balance serializes to.
    private static readonly LoggedState State = new(new byte[38], Incremental: false);

    [Benchmark(Baseline = true)]
    public byte[][] Record() => Logger.Encode([LogRecord.StateWritten(LoggedTxnKind.Batch, 1234, Actor, 17, State)]);

    [Benchmark]
    public byte[][] Direct() => [LogRecord.EncodeState(LoggedTxnKind.Batch, 1234, ActorName, 17, State)];
}
