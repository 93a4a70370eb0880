using System.Text;
using Snapper.Logging;
using Xunit;

namespace Snapper.Tests.Units;

/// <summary>
/// A record's payload bytes, pinned: a restarted silo reads logs written by earlier builds, so the layout (type, kind, id,
/// then for a state the actor's name, seq and bytes, and for a remote ACT the decider's name) may not drift.
/// </summary>
public sealed class LogRecordFormatTests
{
    private static readonly GrainId Actor = GrainId.Create("account", "42");
    private static readonly GrainId FirstActor = GrainId.Create("account", "7");

    [Fact]
    public void A_state_record_is_its_header_then_the_actors_name_its_seq_and_its_bytes()
    {
        var payload = LogRecord.StateWritten(LoggedTxnKind.Batch, 0x0102, Actor, seq: 5, [9, 8, 7]).Encode();

        var expected = new List<byte> { (byte)LogRecordType.StateWritten, (byte)LoggedTxnKind.Batch, 2, 1, 0, 0, 0, 0, 0, 0 };
        var name = Encoding.UTF8.GetBytes("account/42");
        expected.AddRange([(byte)name.Length, 0, 0, 0]);
        expected.AddRange(name);
        expected.AddRange([5, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 9, 8, 7]);
        Assert.Equal(expected, payload);
        Assert.Equal(LogRecord.StateWritten(LoggedTxnKind.Batch, 0x0102, Actor, 5, [9, 8, 7]) with { State = null },
            LogRecord.Decode(payload)! with { State = null });
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void A_state_record_written_from_its_parts_is_the_record_encoded(bool incremental)
    {
        var state = new LoggedState([9, 8, 7], incremental);

        var direct = LogRecord.EncodeState(LoggedTxnKind.Batch, 0x0102, Actor.ToString(), seq: 5, state);

        Assert.Equal(LogRecord.StateWritten(LoggedTxnKind.Batch, 0x0102, Actor, 5, state).Encode(), direct);
        var decoded = LogRecord.Decode(direct)!;
        Assert.Equal(incremental ? LogRecordType.StateChanged : LogRecordType.StateWritten, decoded.Type);
        Assert.Equal(("account/42", 5L), (decoded.Actor, decoded.Seq));
        Assert.Equal([9, 8, 7], decoded.State);
    }

    [Fact]
    public void A_remote_act_state_record_ends_with_the_deciders_name()
    {
        var payload = LogRecord.RemoteActStateWritten(tid: 3, Actor, seq: 1, [4], FirstActor).Encode();

        var decider = Encoding.UTF8.GetBytes("account/7");
        var tail = payload.AsSpan(payload.Length - decider.Length - 4).ToArray();
        Assert.Equal([(byte)decider.Length, 0, 0, 0, .. decider], tail);
        Assert.Equal("account/7", LogRecord.Decode(payload)!.Decider);
        Assert.Equal("account/42", LogRecord.Decode(payload)!.Actor);
    }

    [Fact]
    public void A_decision_is_its_header_alone()
    {
        Assert.Equal(
            [(byte)LogRecordType.Committed, (byte)LoggedTxnKind.Act, 0xff, 0, 0, 0, 0, 0, 0, 0],
            LogRecord.Committed(LoggedTxnKind.Act, 0xff).Encode());
    }

    [Fact]
    public void Encoding_several_records_keeps_their_order()
    {
        LogRecord[] records = [LogRecord.Committed(LoggedTxnKind.Act, 1), LogRecord.Aborted(LoggedTxnKind.Act, 2)];

        var payloads = Logger.Encode(records);

        Assert.Equal(records.Select(r => r.Encode()), payloads);
    }
}
