using Snapper;

namespace Bank;

/// <summary>An account's state: its balance. Orleans copies it for each transaction, so it is serializable.</summary>
[GenerateSerializer]
public sealed class Account
{
    [Id(0)] public decimal Balance { get; set; }
}

[GenerateSerializer]
public sealed record TransferInput([property: Id(0)] long To, [property: Id(1)] decimal Amount);

[GenerateSerializer]
public sealed record MultiTransferInput([property: Id(0)] long[] To, [property: Id(1)] decimal Amount);

/// <summary>Thrown by user code to reject a transfer; Snapper aborts the transaction and rolls back every account.</summary>
[GenerateSerializer]
public sealed class InsufficientBalanceException(string message) : Exception(message);

public interface IAccountActor : ITransactionalActor, IGrainWithIntegerKey
{
    Task Deposit(TxnContext ctx, decimal amount);

    Task<decimal> Transfer(TxnContext ctx, TransferInput input);

    Task<decimal> MultiTransfer(TxnContext ctx, MultiTransferInput input);

    Task<decimal> Balance(TxnContext ctx, int unused);

    Task<decimal[]> Balances(TxnContext ctx, long[] accounts);
}

public sealed class AccountActor : TransactionalActor<Account>, IAccountActor
{
    public async Task Deposit(TxnContext ctx, decimal amount)
    {
        var account = await GetState(ctx, AccessMode.ReadWrite);
        account.Balance += amount;
    }

    public async Task<decimal> Transfer(TxnContext ctx, TransferInput input)
    {
        var account = await Withdraw(ctx, input.Amount);
        await CallActor(ctx, GrainFactory.GetGrain<IAccountActor>(input.To).Deposit, input.Amount);
        return account.Balance;
    }

    public async Task<decimal> MultiTransfer(TxnContext ctx, MultiTransferInput input)
    {
        var account = await Withdraw(ctx, input.Amount * input.To.Length);
        await Task.WhenAll(input.To.Select(to => CallActor(ctx, GrainFactory.GetGrain<IAccountActor>(to).Deposit, input.Amount)));
        return account.Balance;
    }

    public async Task<decimal> Balance(TxnContext ctx, int unused) => (await GetState(ctx, AccessMode.Read)).Balance;

    public async Task<decimal[]> Balances(TxnContext ctx, long[] accounts) =>
        await Task.WhenAll(accounts.Select(id => CallActor(ctx, GrainFactory.GetGrain<IAccountActor>(id).Balance, 0)));

    private async Task<Account> Withdraw(TxnContext ctx, decimal amount)
    {
        var account = await GetState(ctx, AccessMode.ReadWrite);
        if (account.Balance < amount)
        {
            throw new InsufficientBalanceException($"account {this.GetPrimaryKeyLong()} has {account.Balance}, needs {amount}");
        }

        account.Balance -= amount;
        return account;
    }
}
