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

    private static StateVersions<Box> Create(int value = 0) => new(new object(), new Box { Value = value }, b => new Box { Value = b.Value });

    [Fact]
    public void A_read_shares_the_committed_state_and_a_read_only_batch_leaves_no_version()
    {
        var versions = Create(5);

        Assert.Same(versions.Committed, versions.ForPact(AccessMode.Read));
        Assert.Same(versions.Committed, versions.ForActRead());
        Assert.Equal((null, 0L), versions.BatchCompleted(1));
    }

    [Fact]
    public void A_writing_batch_works_on_a_copy_and_its_version_becomes_committed_only_when_it_commits()
    {
        var versions = Create(5);
        var working = versions.ForPact(AccessMode.ReadWrite);
        Assert.NotSame(versions.Committed, working);
        Assert.Same(working, versions.ForPact(AccessMode.ReadWrite)); // the same object for the whole batch
        Assert.Same(working, versions.ForPact(AccessMode.Read));      // later reads of the batch see its writes
        working.Value = 6;

        var (version, seq) = versions.BatchCompleted(1);
        Assert.Same(working, version);
        Assert.Equal(1, seq);
        Assert.Equal(5, versions.Committed.Value);
        Assert.Equal(6, versions.ForActRead().Value); // an ACT after the completed batch reads its version

        versions.BatchCommitted(1);
        Assert.Equal(6, versions.Committed.Value);
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

        versions.InstallAct(copy);

        Assert.Equal(9, versions.Committed.Value);
        Assert.Equal(42, versions.NextSeq());
    }
}
