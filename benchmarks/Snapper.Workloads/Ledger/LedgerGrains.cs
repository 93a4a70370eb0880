using Orleans.Concurrency;
using Snapper;

namespace Snapper.Workloads.Ledger;

/// <summary>
/// An account of the crash tests' and the cluster kill test's ledger (test/Snapper.CrashHost, test/Snapper.ClusterKillCheck): a balance and the ids of the
/// operations applied to it, in order, so that after silos were killed and restarted a client can tell, for each
/// operation it issued, whether it is on every account it touched, on none, or (wrongly) on some.
/// </summary>
[GenerateSerializer]
public sealed class LedgerState
{
    [Id(0)] public long Balance { get; set; }

    [Id(1)] public List<long> Applied { get; set; } = new();
}

/// <summary>Move <paramref name="Amount"/> from the first account to each of <paramref name="To"/>, as operation <paramref name="OpId"/>.</summary>
[GenerateSerializer, Immutable]
public sealed record LedgerMove([property: Id(0)] long OpId, [property: Id(1)] long[] To, [property: Id(2)] long Amount);

[GenerateSerializer, Immutable]
public sealed record LedgerCredit([property: Id(0)] long OpId, [property: Id(1)] long Amount);

[GenerateSerializer]
public sealed class LedgerOverdraftException(string message) : Exception(message);

public interface ILedgerAccount : ITransactionalActor, IGrainWithIntegerKey
{
    Task Open(TxnContext ctx, long balance);

    Task Move(TxnContext ctx, LedgerMove input);

    Task Credit(TxnContext ctx, LedgerCredit input);

    Task<LedgerState[]> ReadAll(TxnContext ctx, [Immutable] long[] accounts);

    Task<LedgerState> Read(TxnContext ctx, int unused);
}

public sealed class LedgerAccount : TransactionalActor<LedgerState>, ILedgerAccount
{
    public async Task Open(TxnContext ctx, long balance)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite);
        state.Balance = balance;
        state.Applied.Clear();
    }

    /// <summary>
    /// Withdraws here and credits each target through <c>CallActor</c>: with targets on another worker this is a
    /// distributed transaction (two-phase commit for an ACT, a global batch for a PACT).
    /// </summary>
    public async Task Move(TxnContext ctx, LedgerMove input)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite);
        var total = input.Amount * input.To.Length;
        if (state.Balance < total)
        {
            throw new LedgerOverdraftException($"balance {state.Balance} is less than {total}");
        }

        state.Balance -= total;
        state.Applied.Add(input.OpId);
        var credits = new Task[input.To.Length];
        for (var i = 0; i < credits.Length; i++)
        {
            credits[i] = CallActor(ctx, GrainFactory.GetGrain<ILedgerAccount>(input.To[i]).Credit, new LedgerCredit(input.OpId, input.Amount));
        }

        await Task.WhenAll(credits);
    }

    public async Task Credit(TxnContext ctx, LedgerCredit input)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite);
        state.Balance += input.Amount;
        state.Applied.Add(input.OpId);
    }

    /// <summary>Every account's state in one transaction, so that the balances read add up to a consistent total.</summary>
    public async Task<LedgerState[]> ReadAll(TxnContext ctx, long[] accounts) =>
        await Task.WhenAll(accounts.Select(id => CallActor(ctx, GrainFactory.GetGrain<ILedgerAccount>(id).Read, 0)));

    public Task<LedgerState> Read(TxnContext ctx, int unused) => GetState(ctx, AccessMode.Read);
}
