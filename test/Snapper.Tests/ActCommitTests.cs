using System.Diagnostics.Metrics;
using Microsoft.Extensions.DependencyInjection;
using Snapper.Tests.Actors;
using Xunit;

namespace Snapper.Tests;

/// <summary>ACTs that commit and abort across actors, through the public API only.</summary>
[Collection(ClusterCollection.Name)]
public sealed class ActCommitTests(ClusterFixture fixture)
{
    private IBankAccount Account(long id) => fixture.Client.GetGrain<IBankAccount>(id);

    private async Task<long[]> OpenAccounts(int count, decimal balance)
    {
        var ids = ClusterFixture.NewIds(count);
        foreach (var id in ids)
        {
            await Account(id).StartTxn(Account(id).Reset, balance);
        }

        return ids;
    }

    private async Task<AccountState[]> ReadAll(long[] ids) => await Account(ids[0]).StartTxn(Account(ids[0]).ReadAll, ids);

    [Fact]
    public async Task Transfer_commits_on_both_actors()
    {
        var ids = await OpenAccounts(2, 100m);

        var remaining = await Account(ids[0]).StartTxn(Account(ids[0]).Transfer, new Transfer(7, ids[1], 30m));

        Assert.Equal(70m, remaining);
        var states = await ReadAll(ids);
        Assert.Equal([70m, 130m], states.Select(s => s.Balance));
        Assert.All(states, s => Assert.Equal([7L], s.Applied));
    }

    [Fact]
    public async Task MultiTransfer_deposits_in_parallel_and_commits_everywhere()
    {
        var ids = await OpenAccounts(5, 100m);

        var remaining = await Account(ids[0]).StartTxn(Account(ids[0]).MultiTransfer, new MultiTransfer(8, ids[1..], 10m));

        Assert.Equal(60m, remaining);
        var states = await ReadAll(ids);
        Assert.Equal([60m, 110m, 110m, 110m, 110m], states.Select(s => s.Balance));
        Assert.Equal(500m, states.Sum(s => s.Balance));
    }

    [Fact]
    public async Task User_exception_in_a_callee_rolls_back_every_participant()
    {
        var ids = await OpenAccounts(3, 100m);

        // Withdrawing 0 succeeds on the first actor; the deposits of 0 throw in the callees.
        var abort = await Assert.ThrowsAsync<TransactionAbortedException>(
            () => Account(ids[0]).StartTxn(Account(ids[0]).MultiTransfer, new MultiTransfer(9, ids[1..], 0m)));

        Assert.Equal(AbortReason.UserException, abort.Reason);
        Assert.Equal(typeof(ArgumentOutOfRangeException).FullName, abort.UserExceptionType);
        Assert.IsType<ArgumentOutOfRangeException>(abort.InnerException);
        Assert.True(abort.Tid > 0);
        var states = await ReadAll(ids);
        Assert.All(states, s => Assert.Equal(100m, s.Balance));
        Assert.All(states, s => Assert.Empty(s.Applied));
    }

    [Fact]
    public async Task User_exception_in_the_first_actor_after_calls_rolls_back_the_callees()
    {
        var ids = await OpenAccounts(2, 10m);

        var abort = await Assert.ThrowsAsync<TransactionAbortedException>(
            () => Account(ids[0]).StartTxn(Account(ids[0]).Transfer, new Transfer(10, ids[1], 50m)));

        Assert.Equal(AbortReason.UserException, abort.Reason);
        Assert.Equal(typeof(InsufficientFundsException).FullName, abort.UserExceptionType);
        Assert.Contains("balance 10", abort.Message);
        Assert.Equal([10m, 10m], (await ReadAll(ids)).Select(s => s.Balance));
    }

    [Fact]
    public async Task Single_actor_act_commits_without_2pc_and_read_only_participants_skip_phase_two()
    {
        var ids = await OpenAccounts(4, 100m);
        using var messages = new TwoPhaseCommitCounter(fixture.Cluster.GetSiloServiceProvider().GetRequiredService<IMeterFactory>());

        await Account(ids[0]).StartTxn(Account(ids[0]).Deposit, new Deposit(11, 5m));
        Assert.Equal((0, 0), messages.Take());

        await Account(ids[0]).StartTxn(Account(ids[0]).Transfer, new Transfer(12, ids[1], 5m));
        Assert.Equal((1, 1), messages.Take());

        // Three callees that only read: prepared, released at prepare, never sent a commit.
        await ReadAll(ids);
        Assert.Equal((3, 0), messages.Take());
    }

    [Fact]
    public async Task Concurrent_transfers_among_few_accounts_conserve_money_and_every_committed_one_is_visible()
    {
        const int accounts = 4, transfers = 240, loops = 12;
        const decimal initial = 1_000m;
        var ids = await OpenAccounts(accounts, initial);
        var random = new Random(42);
        var plan = Enumerable.Range(1, transfers).Select(op =>
        {
            var from = random.Next(accounts);
            var to = (from + 1 + random.Next(accounts - 1)) % accounts;
            return (From: ids[from], Transfer: new Transfer(op, ids[to], random.Next(1, 400)));
        }).ToArray();
        var committed = new System.Collections.Concurrent.ConcurrentBag<(long From, Transfer Transfer)>();
        var aborted = new System.Collections.Concurrent.ConcurrentBag<AbortReason>();
        var next = -1;

        await Task.WhenAll(Enumerable.Range(0, loops).Select(async _ =>
        {
            int index;
            while ((index = Interlocked.Increment(ref next)) < plan.Length)
            {
                var (from, transfer) = plan[index];
                try
                {
                    await Account(from).StartTxn(Account(from).Transfer, transfer);
                    committed.Add((from, transfer));
                }
                catch (TransactionAbortedException abort)
                {
                    aborted.Add(abort.Reason);
                }
            }
        }));

        Assert.NotEmpty(committed);
        Assert.Equal(transfers, committed.Count + aborted.Count);
        // An ACT waits up to 2 s for each of two locks, so on a starved machine its 5 s execution bound may end it too.
        Assert.All(aborted, reason => Assert.Contains(reason, new[] { AbortReason.WaitDie, AbortReason.UserException, AbortReason.LockTimeout, AbortReason.ExecutionTimeout }));
        var states = await ReadAll(ids);
        Assert.Equal(accounts * initial, states.Sum(s => s.Balance));
        for (var i = 0; i < accounts; i++)
        {
            var id = ids[i];
            var mine = committed.Where(c => c.From == id || c.Transfer.To == id).ToArray();
            var expected = initial
                - mine.Where(c => c.From == id).Sum(c => c.Transfer.Amount)
                + mine.Where(c => c.Transfer.To == id).Sum(c => c.Transfer.Amount);
            Assert.Equal(expected, states[i].Balance);
            Assert.Equal(mine.Select(c => c.Transfer.OpId).Order(), states[i].Applied.Order());
        }
    }

    /// <summary>
    /// Counts the 2PC messages Snapper reports through the meter of one silo. A listener sees every meter in the
    /// process, and test classes with silos of their own run in parallel with this one: only the meter created by
    /// this silo's meter factory (its scope) counts.
    /// </summary>
    private sealed class TwoPhaseCommitCounter : IDisposable
    {
        private readonly MeterListener _listener = new();
        private long _prepares;
        private long _commits;

        public TwoPhaseCommitCounter(IMeterFactory silo)
        {
            _listener.InstrumentPublished = (instrument, listener) =>
            {
                if (instrument.Meter.Scope == silo && instrument.Meter.Name == "Snapper" && instrument.Name.StartsWith("snapper.act.", StringComparison.Ordinal))
                {
                    listener.EnableMeasurementEvents(instrument);
                }
            };
            _listener.SetMeasurementEventCallback<long>((instrument, value, _, _) =>
            {
                if (instrument.Name == "snapper.act.prepare.sent")
                {
                    Interlocked.Add(ref _prepares, value);
                }
                else if (instrument.Name == "snapper.act.commit.sent")
                {
                    Interlocked.Add(ref _commits, value);
                }
            });
            _listener.Start();
        }

        public (long Prepares, long Commits) Take() => (Interlocked.Exchange(ref _prepares, 0), Interlocked.Exchange(ref _commits, 0));

        public void Dispose() => _listener.Dispose();
    }
}
