using Orleans.Concurrency;
using Orleans.Transactions.Abstractions;
using Snapper;

namespace Snapper.Workloads.SmallBank;

[GenerateSerializer]
public sealed class Balance
{
    [Id(0)] public long Amount { get; set; }
}

/// <summary>MultiTransfer's input: withdraw <c>Amount × To.Length</c> from the first account, deposit <c>Amount</c> to each of <c>To</c>.</summary>
[GenerateSerializer, Immutable]
public sealed record MultiTransferInput([property: Id(0)] long[] To, [property: Id(1)] long Amount);

/// <summary>SmallBank on Snapper ACTs.</summary>
public interface ISnapperAccount : ITransactionalActor, IGrainWithIntegerKey
{
    Task Init(TxnContext ctx, long balance);

    Task MultiTransfer(TxnContext ctx, MultiTransferInput input);

    Task Deposit(TxnContext ctx, long amount);

    Task<long> Read(TxnContext ctx, int unused);

    Task<long> SumBalances(TxnContext ctx, [Immutable] long[] accounts);
}

public sealed class SnapperAccount : TransactionalActor<Balance>, ISnapperAccount
{
    public async Task Init(TxnContext ctx, long balance) => (await GetState(ctx, AccessMode.ReadWrite)).Amount = balance;

    public async Task MultiTransfer(TxnContext ctx, MultiTransferInput input)
    {
        var balance = await GetState(ctx, AccessMode.ReadWrite);
        var total = input.Amount * input.To.Length;
        if (balance.Amount < total)
        {
            throw new InvalidOperationException($"balance {balance.Amount} below {total}");
        }

        balance.Amount -= total;
        var deposits = new Task[input.To.Length];
        for (var i = 0; i < deposits.Length; i++)
        {
            deposits[i] = CallActor(ctx, GrainFactory.Cached<ISnapperAccount>(input.To[i]).Deposit, input.Amount);
        }

        await Task.WhenAll(deposits);
    }

    public async Task Deposit(TxnContext ctx, long amount) => (await GetState(ctx, AccessMode.ReadWrite)).Amount += amount;

    public async Task<long> Read(TxnContext ctx, int unused) => (await GetState(ctx, AccessMode.Read)).Amount;

    public async Task<long> SumBalances(TxnContext ctx, long[] accounts)
    {
        var reads = accounts.Select(id => CallActor(ctx, GrainFactory.Cached<ISnapperAccount>(id).Read, 0));
        return (await Task.WhenAll(reads)).Sum();
    }
}

/// <summary>SmallBank with plain Orleans calls (NT). Reentrant: a non-reentrant MultiTransfer deadlocks on call cycles under skew.</summary>
public interface INtAccount : IGrainWithIntegerKey
{
    Task Init(long balance);

    Task MultiTransfer(MultiTransferInput input);

    Task Deposit(long amount);

    Task<long> Read();
}

[Reentrant]
public sealed class NtAccount : Grain, INtAccount
{
    private long _balance;

    public Task Init(long balance)
    {
        _balance = balance;
        return Task.CompletedTask;
    }

    public Task MultiTransfer(MultiTransferInput input)
    {
        _balance -= input.Amount * input.To.Length;
        var deposits = new Task[input.To.Length];
        for (var i = 0; i < deposits.Length; i++)
        {
            deposits[i] = GrainFactory.Cached<INtAccount>(input.To[i]).Deposit(input.Amount);
        }

        return Task.WhenAll(deposits);
    }

    public Task Deposit(long amount)
    {
        _balance += amount;
        return Task.CompletedTask;
    }

    public Task<long> Read() => Task.FromResult(_balance);
}

/// <summary>SmallBank on Microsoft.Orleans.Transactions (reentrant grains, transactional state).</summary>
public interface IOrleansTxnAccount : IGrainWithIntegerKey
{
    [Transaction(TransactionOption.Create)]
    Task Init(long balance);

    [Transaction(TransactionOption.Create)]
    Task MultiTransfer(MultiTransferInput input);

    /// <summary>
    /// The same transfer, taking its accounts' locks one at a time in ascending account order
    /// (<see cref="OrleansTxnLockOrder.Ascending"/>).
    /// </summary>
    [Transaction(TransactionOption.Create)]
    Task MultiTransferInAscendingOrder(MultiTransferInput input);

    [Transaction(TransactionOption.Join)]
    Task Deposit(long amount);

    [Transaction(TransactionOption.CreateOrJoin)]
    Task<long> Read();
}

[Reentrant]
public sealed class OrleansTxnAccount(
    [TransactionalState("balance", OrleansTxnStorage.Name)] ITransactionalState<Balance> balance) : Grain, IOrleansTxnAccount
{
    public Task Init(long amount) => balance.PerformUpdate(b => b.Amount = amount);

    public async Task MultiTransfer(MultiTransferInput input)
    {
        await balance.PerformUpdate(b => b.Amount -= input.Amount * input.To.Length);
        var deposits = new Task[input.To.Length];
        for (var i = 0; i < deposits.Length; i++)
        {
            deposits[i] = GrainFactory.Cached<IOrleansTxnAccount>(input.To[i]).Deposit(input.Amount);
        }

        await Task.WhenAll(deposits);
    }

    public async Task MultiTransferInAscendingOrder(MultiTransferInput input)
    {
        // Every transaction waits only for accounts above all it holds, so no cycle of waits can form.
        var self = this.GetPrimaryKeyLong();
        foreach (var account in input.To.Append(self).Order())
        {
            if (account == self)
            {
                await balance.PerformUpdate(b => b.Amount -= input.Amount * input.To.Length);
            }
            else
            {
                await GrainFactory.Cached<IOrleansTxnAccount>(account).Deposit(input.Amount);
            }
        }
    }

    public Task Deposit(long amount) => balance.PerformUpdate(b => b.Amount += amount);

    public Task<long> Read() => balance.PerformRead(b => b.Amount);
}
