using Snapper.Act;
using Snapper.Hybrid;
using Xunit;

namespace Snapper.Tests.Units;

/// <summary>A first actor's memory of commits some participants missed: closed when the last of them acknowledged it.</summary>
public sealed class RecentOutcomesTests
{
    private static readonly GrainId P1 = GrainId.Create("account", "1");
    private static readonly GrainId P2 = GrainId.Create("account", "2");

    [Fact]
    public void A_commit_is_closed_only_when_every_participant_that_missed_it_has_acknowledged_it()
    {
        var outcomes = new RecentOutcomes();
        outcomes.Record(7, TxnOutcome.Committed);
        outcomes.AwaitAcknowledgements(7, [P1, P2], BatchPosition.None);

        Assert.False(outcomes.Acknowledge(7, P1));
        Assert.False(outcomes.Acknowledge(7, P1)); // acknowledging twice counts once
        Assert.True(outcomes.Acknowledge(7, P2));
        Assert.False(outcomes.Acknowledge(7, P2));
        Assert.True(outcomes.TryGet(7, out var outcome));
        Assert.Equal(TxnOutcome.Committed, outcome);
    }

    [Fact]
    public void A_commit_every_participant_acknowledged_is_not_closed_again()
    {
        var outcomes = new RecentOutcomes();
        outcomes.Record(8, TxnOutcome.Committed);

        Assert.False(outcomes.Acknowledge(8, P1));
    }

    [Fact]
    public void A_commit_is_sent_again_to_the_participants_still_missing_once_its_last_sending_is_old_enough()
    {
        var outcomes = new RecentOutcomes();
        outcomes.Record(9, TxnOutcome.Committed);
        var maxBefore = BatchPosition.Local(3, 1, 0, 4);
        outcomes.AwaitAcknowledgements(9, [P1, P2], maxBefore);

        Assert.Empty(outcomes.ToSendAgain(TimeSpan.FromHours(1))); // just sent

        Assert.False(outcomes.Acknowledge(9, P1));
        var due = Assert.Single(outcomes.ToSendAgain(TimeSpan.FromMilliseconds(-1)));
        Assert.Equal(9, due.Tid);
        Assert.Equal([P2], due.Participants);
        Assert.Equal(maxBefore, due.MaxBefore);

        Assert.Empty(outcomes.ToSendAgain(TimeSpan.FromHours(1))); // counted as sent again now
        Assert.True(outcomes.Acknowledge(9, P2));
        Assert.Empty(outcomes.ToSendAgain(TimeSpan.FromMilliseconds(-1)));
        Assert.False(outcomes.HasUnacknowledgedCommits);
    }

    [Fact]
    public void Without_a_log_a_commit_still_to_be_acknowledged_outlives_the_retention()
    {
        var outcomes = new RecentOutcomes();
        outcomes.Record(10, TxnOutcome.Committed);
        outcomes.AwaitAcknowledgements(10, [P1], BatchPosition.None);
        outcomes.Record(11, TxnOutcome.Aborted);

        outcomes.Prune(TimeSpan.FromMilliseconds(-1), keepUnacknowledged: true);
        Assert.True(outcomes.TryGet(10, out var outcome)); // a participant asking now still hears "committed"
        Assert.Equal(TxnOutcome.Committed, outcome);
        Assert.Single(outcomes.ToSendAgain(TimeSpan.FromMilliseconds(-1)));
        Assert.False(outcomes.TryGet(11, out _));

        // With a log, its open commits answer instead: memory lets go after the retention.
        outcomes.Prune(TimeSpan.FromMilliseconds(-1));
        Assert.False(outcomes.TryGet(10, out _));
        Assert.False(outcomes.HasUnacknowledgedCommits);
    }
}
