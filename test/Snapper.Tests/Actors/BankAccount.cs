using Snapper;

namespace Snapper.Tests.Actors;

[GenerateSerializer]
public sealed class AccountState
{
    [Id(0)] public decimal Balance { get; set; }

    /// <summary>Ids of the operations applied to this account, in order: the history the tests check.</summary>
    [Id(1)] public List<long> Applied { get; set; } = new();
}

[GenerateSerializer]
public sealed record Transfer([property: Id(0)] long OpId, [property: Id(1)] long To, [property: Id(2)] decimal Amount);

[GenerateSerializer]
public sealed record MultiTransfer([property: Id(0)] long OpId, [property: Id(1)] long[] To, [property: Id(2)] decimal Amount);

[GenerateSerializer]
public sealed record Deposit([property: Id(0)] long OpId, [property: Id(1)] decimal Amount);

[GenerateSerializer]
public sealed class InsufficientFundsException(string message) : Exception(message);

public interface IBankAccount : ITransactionalActor, IGrainWithIntegerKey
{
    Task<decimal> Deposit(TxnContext ctx, Deposit input);

    Task<decimal> Transfer(TxnContext ctx, Transfer input);

    Task<decimal> MultiTransfer(TxnContext ctx, MultiTransfer input);

    Task<decimal> Balance(TxnContext ctx, int unused);

    Task<AccountState> Snapshot(TxnContext ctx, int unused);

    Task<AccountState[]> ReadAll(TxnContext ctx, long[] accounts);

    Task Reset(TxnContext ctx, decimal balance);
}

/// <summary>An interface the account implements that is not transactional: its methods must not be reachable.</summary>
public interface IBankAdmin : IGrainWithIntegerKey
{
    Task<decimal> Audit(TxnContext ctx, int input);
}

public sealed class BankAccount : ControllableActor<AccountState>, IBankAccount, IBankAdmin
{
    public async Task<decimal> Deposit(TxnContext ctx, Deposit input)
    {
        if (input.Amount <= 0)
        {
            throw new ArgumentOutOfRangeException(nameof(input), $"deposit must be positive, was {input.Amount}");
        }

        var state = await GetState(ctx, AccessMode.ReadWrite);
        state.Balance += input.Amount;
        state.Applied.Add(input.OpId);
        return state.Balance;
    }

    public async Task<decimal> Transfer(TxnContext ctx, Transfer input)
    {
        var state = await Withdraw(ctx, input.OpId, input.Amount);
        var to = GrainFactory.GetGrain<IBankAccount>(input.To);
        await CallActor(ctx, to.Deposit, new Deposit(input.OpId, input.Amount));
        return state.Balance;
    }

    public async Task<decimal> MultiTransfer(TxnContext ctx, MultiTransfer input)
    {
        var state = await Withdraw(ctx, input.OpId, input.Amount * input.To.Length);
        await Task.WhenAll(input.To.Select(id =>
            CallActor(ctx, GrainFactory.GetGrain<IBankAccount>(id).Deposit, new Deposit(input.OpId, input.Amount))));
        return state.Balance;
    }

    public async Task<decimal> Balance(TxnContext ctx, int unused) => (await GetState(ctx, AccessMode.Read)).Balance;

    public Task<AccountState> Snapshot(TxnContext ctx, int unused) => GetState(ctx, AccessMode.Read);

    public async Task<AccountState[]> ReadAll(TxnContext ctx, long[] accounts) =>
        await Task.WhenAll(accounts.Select(id =>
            id == this.GetPrimaryKeyLong()
                ? GetState(ctx, AccessMode.Read)
                : CallActor(ctx, GrainFactory.GetGrain<IBankAccount>(id).Snapshot, 0)));

    public async Task Reset(TxnContext ctx, decimal balance)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite);
        state.Balance = balance;
        state.Applied.Clear();
    }

    public Task<decimal> Audit(TxnContext ctx, int input) => Task.FromResult(CommittedState.Balance);

    private async Task<AccountState> Withdraw(TxnContext ctx, long opId, decimal amount)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite);
        if (state.Balance < amount)
        {
            throw new InsufficientFundsException($"balance {state.Balance} is less than {amount}");
        }

        state.Balance -= amount;
        state.Applied.Add(opId);
        return state;
    }
}
