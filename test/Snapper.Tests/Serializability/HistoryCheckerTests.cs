using Xunit;

namespace Snapper.Tests.Serializability;

/// <summary>The checker on hand-made histories: it must accept serial ones and name what is wrong in the others.</summary>
public sealed class HistoryCheckerTests
{
    private static Observation Read(long actor, params long[] seen) => new(actor, seen, false);

    private static Observation Write(long actor, params long[] seen) => new(actor, seen, true);

    [Fact]
    public void A_serial_history_passes()
    {
        var history = new[]
        {
            new RecordedTxn(1, true, [Write(10), Write(20)]),
            new RecordedTxn(2, true, [Read(10, 1), Write(20, 1)]),
            new RecordedTxn(3, false, []),
        };
        var final = new Dictionary<long, long[]> { [10] = [1], [20] = [1, 2] };

        Assert.Empty(HistoryChecker.Check(history, final));
    }

    [Fact]
    public void Write_skew_is_a_cycle()
    {
        // T1 reads A and writes B; T2 reads B and writes A; each read the other's item before its write.
        var history = new[]
        {
            new RecordedTxn(1, true, [Read(10), Write(20)]),
            new RecordedTxn(2, true, [Read(20), Write(10)]),
        };
        var final = new Dictionary<long, long[]> { [10] = [2], [20] = [1] };

        Assert.Contains(HistoryChecker.Check(history, final), p => p.Contains("cycle"));
    }

    [Fact]
    public void Lost_update_is_a_cycle()
    {
        var history = new[]
        {
            new RecordedTxn(1, true, [Write(10)]),
            new RecordedTxn(2, true, [Write(10)]),
        };
        var final = new Dictionary<long, long[]> { [10] = [1, 2] };

        Assert.Contains(HistoryChecker.Check(history, final), p => p.Contains("cycle"));
    }

    [Fact]
    public void Visible_aborted_write_and_missing_committed_write_are_reported()
    {
        var history = new[]
        {
            new RecordedTxn(1, true, [Write(10)]),
            new RecordedTxn(2, false, []),
        };
        var final = new Dictionary<long, long[]> { [10] = [2] };

        var problems = HistoryChecker.Check(history, final);

        Assert.Contains(problems, p => p.Contains("aborted transaction 2 is visible"));
        Assert.Contains(problems, p => p.Contains("committed write of transaction 1 is missing"));
    }

    [Fact]
    public void A_read_of_a_state_that_never_existed_is_reported()
    {
        var history = new[]
        {
            new RecordedTxn(1, true, [Write(10)]),
            new RecordedTxn(2, true, [Write(10)]),
            new RecordedTxn(3, true, [Read(10, 2)]),
        };
        var final = new Dictionary<long, long[]> { [10] = [1, 2] };

        Assert.Contains(HistoryChecker.Check(history, final), p => p.Contains("no prefix"));
    }
}
