using Snapper;

namespace Snapper.CrashHost;

/// <summary>An account of the crash tests' ledger: a balance and the ids of the operations applied to it, in order.</summary>
[GenerateSerializer]
public sealed class LedgerState
{
    [Id(0)] public decimal Balance { get; set; }

    [Id(1)] public List<long> Applied { get; set; } = new();
}

/// <summary>Move <paramref name="Amount"/> from the first account to each of <paramref name="To"/>; refused if the first account lacks the money.</summary>
[GenerateSerializer]
public sealed record Move([property: Id(0)] long OpId, [property: Id(1)] long[] To, [property: Id(2)] decimal Amount);

[GenerateSerializer]
public sealed record Credit([property: Id(0)] long OpId, [property: Id(1)] decimal Amount);

[GenerateSerializer]
public sealed class OverdraftException(string message) : Exception(message);

public interface ILedgerAccount : ITransactionalActor, IGrainWithIntegerKey
{
    Task Open(TxnContext ctx, decimal balance);

    Task Move(TxnContext ctx, Move input);

    Task Credit(TxnContext ctx, Credit input);

    Task<LedgerState[]> ReadAll(TxnContext ctx, long[] accounts);

    Task<LedgerState> Read(TxnContext ctx, int unused);
}

public sealed class LedgerAccount : TransactionalActor<LedgerState>, ILedgerAccount
{
    public async Task Open(TxnContext ctx, decimal balance) => (await GetState(ctx, AccessMode.ReadWrite)).Balance = balance;

    public async Task Move(TxnContext ctx, Move input)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite);
        var total = input.Amount * input.To.Length;
        if (state.Balance < total)
        {
            throw new OverdraftException($"balance {state.Balance} is less than {total}");
        }

        state.Balance -= total;
        state.Applied.Add(input.OpId);
        await Task.WhenAll(input.To.Select(to => CallActor(ctx, GrainFactory.GetGrain<ILedgerAccount>(to).Credit, new Credit(input.OpId, input.Amount))));
    }

    public async Task Credit(TxnContext ctx, Credit input)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite);
        state.Balance += input.Amount;
        state.Applied.Add(input.OpId);
    }

    public async Task<LedgerState[]> ReadAll(TxnContext ctx, long[] accounts) =>
        await Task.WhenAll(accounts.Select(id => CallActor(ctx, GrainFactory.GetGrain<ILedgerAccount>(id).Read, 0)));

    public Task<LedgerState> Read(TxnContext ctx, int unused) => GetState(ctx, AccessMode.Read);
}
