using Snapper.Tests.Actors;
using Xunit;

namespace Snapper.Tests;

/// <summary>Every misuse gets a typed error and leaves the actors' state as it was.</summary>
[Collection(ClusterCollection.Name)]
public sealed class BadInputTests(ClusterFixture fixture)
{
    private IBankAccount Account(long id) => fixture.Client.GetGrain<IBankAccount>(id);

    private IProbe Probe(long id) => fixture.Client.GetGrain<IProbe>(id);

    private async Task<decimal> Balance(long id) => await Account(id).StartTxn(Account(id).Balance, 0);

    private async Task<int> Read(long id) => await Probe(id).StartTxn(Probe(id).Read, 0);

    [Fact]
    public async Task Unknown_method_is_refused_by_name()
    {
        var id = ClusterFixture.NewId();
        var error = await Assert.ThrowsAsync<TransactionalMethodNotFoundException>(
            () => Account(id).StartTxn(new TxnRequest("Steal", 5m)));
        Assert.Equal("Steal", error.Method);
        Assert.Contains(nameof(BankAccount), error.ActorType);
    }

    [Fact]
    public async Task Method_of_a_non_transactional_interface_is_not_reachable()
    {
        var id = ClusterFixture.NewId();
        await Assert.ThrowsAsync<TransactionalMethodNotFoundException>(() => Account(id).StartTxn(new TxnRequest(nameof(IBankAdmin.Audit), 1)));
    }

    [Fact]
    public async Task Wrong_input_type_and_null_input_are_refused_before_anything_runs()
    {
        var id = ClusterFixture.NewId();
        await Account(id).StartTxn(Account(id).Reset, 50m);

        var wrongType = await Assert.ThrowsAsync<TransactionInputException>(
            () => Account(id).StartTxn(new TxnRequest(nameof(IBankAccount.Deposit), "fifty")));
        Assert.Equal(typeof(string).FullName, wrongType.ActualType);
        Assert.Equal(typeof(Deposit).FullName, wrongType.ExpectedType);

        var nullRecord = await Assert.ThrowsAsync<TransactionInputException>(
            () => Account(id).StartTxn(new TxnRequest(nameof(IBankAccount.Deposit), null)));
        Assert.Null(nullRecord.ActualType);

        await Assert.ThrowsAsync<TransactionInputException>(() => Account(id).StartTxn(new TxnRequest(nameof(IBankAccount.Reset), null)));
        Assert.Equal(50m, await Balance(id));
    }

    [Fact]
    public async Task A_selector_that_names_another_actor_is_refused_on_the_client()
    {
        var ids = ClusterFixture.NewIds(2);
        var other = Account(ids[1]);
        await Assert.ThrowsAsync<ArgumentException>(() => Account(ids[0]).StartTxn(other.Deposit, new Deposit(1, 1m)));
    }

    [Fact]
    public async Task Using_a_context_after_its_transaction_ended_aborts_with_a_typed_error()
    {
        var id = ClusterFixture.NewId();
        await Probe(id).StartTxn(Probe(id).Keep, 0);

        var abort = await Assert.ThrowsAsync<TransactionAbortedException>(() => Probe(id).StartTxn(Probe(id).UseKept, 0));

        Assert.Equal(AbortReason.InvalidCall, abort.Reason);
        Assert.IsType<TransactionNotActiveException>(abort.InnerException);
        Assert.Equal(0, await Read(id));
    }

    [Fact]
    public async Task A_call_that_is_not_awaited_aborts_and_leaves_both_actors_unchanged()
    {
        var ids = ClusterFixture.NewIds(2);

        var abort = await Assert.ThrowsAsync<TransactionAbortedException>(() => Probe(ids[0]).StartTxn(Probe(ids[0]).CallWithoutAwait, ids[1]));

        Assert.Equal(AbortReason.UnawaitedCall, abort.Reason);
        Assert.Equal(0, await Read(ids[0]));
        Assert.Equal(0, await ReadEventually(ids[1]));
    }

    [Fact]
    public async Task A_failed_call_caught_by_user_code_still_aborts_the_whole_transaction()
    {
        var ids = ClusterFixture.NewIds(3);

        // ids[0] increments itself, then calls ids[1], which increments itself and ids[2] and then throws.
        var abort = await Assert.ThrowsAsync<TransactionAbortedException>(() => Probe(ids[0]).StartTxn(Probe(ids[0]).CatchFailedCall, ids[1]));

        Assert.Equal(AbortReason.UserException, abort.Reason);
        Assert.IsType<InvalidOperationException>(abort.InnerException);
        foreach (var id in ids)
        {
            Assert.Equal(0, await Read(id));
        }
    }

    [Theory]
    [InlineData(TxnMode.Act)]
    [InlineData(TxnMode.Pact)]
    public async Task A_method_that_returns_no_task_aborts_with_a_clear_error_first_actor_or_callee(TxnMode mode)
    {
        var ids = ClusterFixture.NewIds(2);
        ActorAccessInfo? Declared(params long[] actors) => mode == TxnMode.Pact ? ActorAccessInfo.Of([.. actors.Select(a => (IAddressable)Probe(a))]) : null;

        var first = await Assert.ThrowsAsync<TransactionAbortedException>(
            () => Probe(ids[0]).StartTxn(new TxnRequest(nameof(IProbe.ReturnNoTask), 0, Declared(ids[0]))));
        var callee = await Assert.ThrowsAsync<TransactionAbortedException>(
            () => Probe(ids[0]).StartTxn(new TxnRequest(nameof(IProbe.IncrementThenCallNoTask), ids[1], Declared(ids[0], ids[1]))));

        foreach (var abort in new[] { first, callee })
        {
            Assert.Equal(AbortReason.UserException, abort.Reason);
            Assert.Contains($"{nameof(IProbe.ReturnNoTask)} returned null instead of a task", abort.InnerException!.Message);
        }

        Assert.Equal(0, await Read(ids[0]));
        Assert.Equal(0, await ReadEventually(ids[1]));
    }

    [Fact]
    public async Task A_user_exception_without_a_serializer_arrives_as_its_type_name()
    {
        var ids = ClusterFixture.NewIds(2);

        var abort = await Assert.ThrowsAsync<TransactionAbortedException>(
            () => Probe(ids[0]).StartTxn(Probe(ids[0]).IncrementThenThrowUnserializable, ids[1]));

        Assert.Equal(AbortReason.UserException, abort.Reason);
        Assert.Equal(typeof(LocalOnlyException).FullName, abort.UserExceptionType);
        Assert.Null(abort.InnerException);
        Assert.Contains("no codec for me", abort.Message);
        Assert.Equal(0, await Read(ids[0]));
        Assert.Equal(0, await Read(ids[1]));
    }

    /// <summary>Reads an actor that a stray call may still hold, retrying while it is locked.</summary>
    private async Task<int> ReadEventually(long id)
    {
        for (var attempt = 0; ; attempt++)
        {
            try
            {
                return await Read(id);
            }
            catch (TransactionAbortedException abort) when (attempt < 20 && abort.Reason is AbortReason.WaitDie or AbortReason.LockTimeout)
            {
                await Task.Delay(200);
            }
        }
    }
}
