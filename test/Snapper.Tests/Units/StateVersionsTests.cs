using Snapper.Logging;
using Snapper.Scheduling;
using Xunit;

namespace Snapper.Tests.Units;

/// <summary>The committed state and the versions batches leave on an actor, without a silo.</summary>
public sealed class StateVersionsTests
{
    private sealed class Box
    {
        public int Value { get; set; }
    }

    private static StateVersions<Box> Create(int value = 0, Func<Box, LoggedState>? logForm = null) =>
        new(new object(), new Box { Value = value }, b => new Box { Value = b.Value }, logForm: logForm);

    /// <summary>A log form that keeps the value as it was when it was taken.</summary>
    private static LoggedState LogValue(Box box) => new(BitConverter.GetBytes(box.Value), Incremental: false);

    private static int LoggedValue(CompletedVersion version) => BitConverter.ToInt32(version.State!.Value.Bytes);

    [Fact]
    public void A_read_shares_the_committed_state_and_a_read_only_batch_leaves_no_version()
    {
        var versions = Create(5);

        Assert.Same(versions.Committed, versions.ForPact(AccessMode.Read));
        Assert.Same(versions.Committed, versions.ForActRead());
        Assert.Equal(default, versions.BatchCompleted(1));
    }

    [Fact]
    public void A_writing_batch_keeps_a_copy_as_committed_and_its_version_becomes_committed_only_when_it_commits()
    {
        var versions = Create(5, LogValue);
        var working = versions.ForPact(AccessMode.ReadWrite);
        Assert.NotSame(versions.Committed, working);
        Assert.Same(working, versions.ForPact(AccessMode.ReadWrite)); // the same object for the whole batch
        Assert.Same(working, versions.ForPact(AccessMode.Read));      // later reads of the batch see its writes
        working.Value = 6;
        Assert.Equal(5, versions.Committed.Value);

        var completed = versions.BatchCompleted(1);
        Assert.Equal(6, LoggedValue(completed));
        Assert.Equal(1, completed.Seq);
        Assert.Equal(5, versions.Committed.Value);
        Assert.Equal(6, versions.ForActRead().Value); // an ACT after the completed batch reads its version

        versions.BatchCommitted(1);
        Assert.Equal(6, versions.Committed.Value);
    }

    [Fact]
    public void Batches_change_the_actors_one_state_object_in_place_and_each_version_is_logged_as_its_batch_left_it()
    {
        var versions = Create(0, LogValue);
        var state = versions.Committed;

        versions.ForPact(AccessMode.ReadWrite).Value = 1;
        var first = versions.BatchCompleted(1);
        var second = versions.ForPact(AccessMode.ReadWrite); // the next batch starts before the first commits
        Assert.Same(state, second);
        second.Value = 2;

        Assert.Equal(1, LoggedValue(first)); // taken when batch 1 completed, not changed by batch 2
        Assert.Equal(0, versions.Committed.Value);
        Assert.Equal(0, versions.ForActRead().Value); // a batch is writing: an ACT reads the committed state
        versions.BatchCommitted(1);
        Assert.Equal(1, versions.Committed.Value); // batch 1's version, kept apart when batch 2 began to write
        Assert.NotSame(state, versions.Committed);

        Assert.Equal(2, LoggedValue(versions.BatchCompleted(2)));
        versions.BatchCommitted(2);
        Assert.Same(state, versions.Committed); // the same object again: copies die young, the state object lives on
        Assert.Equal(2, versions.Committed.Value);
    }

    [Fact]
    public void A_state_the_log_form_refuses_completes_with_the_failure_and_stays_uncommitted()
    {
        var versions = Create(0, _ => throw new InvalidOperationException("not serializable"));
        versions.ForPact(AccessMode.ReadWrite).Value = 1;

        var completed = versions.BatchCompleted(1);

        Assert.Null(completed.State);
        Assert.IsType<InvalidOperationException>(completed.LogFailure);
        versions.DropAfter(0); // the batch aborts
        Assert.Equal(0, versions.Committed.Value);
        Assert.Equal(0, versions.ForPact(AccessMode.Read).Value);
    }

    [Fact]
    public void A_cascading_abort_drops_the_versions_after_the_kept_batch()
    {
        var versions = Create(0);
        versions.ForPact(AccessMode.ReadWrite).Value = 1;
        versions.BatchCompleted(1);
        versions.ForPact(AccessMode.ReadWrite).Value = 2;
        versions.BatchCompleted(2);

        versions.DropAfter(1);

        Assert.Equal(1, versions.ForPact(AccessMode.Read).Value);
        versions.BatchCommitted(2); // gone: nothing installed
        Assert.Equal(0, versions.Committed.Value);
        versions.BatchCommitted(1);
        Assert.Equal(1, versions.Committed.Value);
    }

    [Fact]
    public void An_act_installs_its_copy_and_seqs_continue_above_what_recovery_found()
    {
        var versions = new StateVersions<Box>(new object(), new Box(), b => new Box { Value = b.Value }, lastSeq: 41);
        var copy = versions.ForAct();
        copy.Value = 9;
        Assert.Equal(0, versions.Committed.Value);

        versions.InstallAct(copy, readFrom: -1);

        Assert.Equal(9, versions.Committed.Value);
        Assert.Equal(42, versions.NextSeq());
    }

    [Fact]
    public void An_act_that_read_a_batch_not_yet_applied_stays_installed_when_the_batch_commits_after_it()
    {
        // Batches 1 and 2 completed here; the ACT read batch 2's state and committed once their commit records were
        // queued, before either was applied.
        var versions = Create(0);
        versions.ForPact(AccessMode.ReadWrite).Value = 1;
        versions.BatchCompleted(1);
        versions.ForPact(AccessMode.ReadWrite).Value = 2;
        versions.BatchCompleted(2);
        var copy = versions.ForAct();
        Assert.Equal(2, copy.Value);
        copy.Value = 12;

        versions.InstallAct(copy, readFrom: 2);
        Assert.Equal(12, versions.Committed.Value);

        // Their commits, applied now, find nothing to install over the ACT's state; the next batch runs on it.
        versions.BatchCommitted(1);
        versions.BatchCommitted(2);
        Assert.Equal(12, versions.Committed.Value);
        Assert.Equal(12, versions.ForPact(AccessMode.Read).Value);
        versions.ForPact(AccessMode.ReadWrite).Value = 13;
        versions.BatchCompleted(3);
        versions.BatchCommitted(3);
        Assert.Equal(13, versions.Committed.Value);
    }
}
