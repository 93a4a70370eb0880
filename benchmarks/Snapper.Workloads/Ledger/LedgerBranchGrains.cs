using Orleans.Concurrency;
using Snapper;

namespace Snapper.Workloads.Ledger;

/// <summary>
/// The crash tests' ledger on key-value actors: a branch holds several accounts, one key each (account id to
/// <see cref="LedgerState"/>), so that a transfer changes a few keys of a few branches and the log holds only those
/// keys (incremental logging). Accounts <see cref="AccountsPerBranch"/> apart share a branch. Odd branches use key-level
/// concurrency control (PACTs declaring the accounts they touch run side by side on a branch), even ones actor level.
/// Each branch has a mirror (<see cref="ILedgerMirror"/>) whose keys follow the branch's accounts by dependency, so
/// every transfer changes the mirrors too, forwarded by Snapper in the same transaction.
/// </summary>
public static class LedgerBranches
{
    public const long AccountsPerBranch = 4;

    public static long BranchOf(long account) => account / AccountsPerBranch;

    public static bool IsKeyLevel(long branch) => branch % 2 == 1;

    /// <summary>
    /// A PACT's declaration for a transfer among <paramref name="accounts"/>: one access per branch, with the accounts it
    /// uses there, and the same keys of the branches' mirrors, which the dependencies reach.
    /// </summary>
    public static ActorAccessInfo Declare(IGrainFactory grains, IEnumerable<long> accounts)
    {
        var info = new ActorAccessInfo();
        foreach (var account in accounts)
        {
            info.AddKeys(grains.GetGrain<ILedgerBranch>(BranchOf(account)), account);
            info.AddKeys(grains.GetGrain<ILedgerMirror>(BranchOf(account)), account);
        }

        return info;
    }
}

/// <summary>Move <paramref name="Amount"/> from account <paramref name="From"/> to each of <paramref name="To"/>, as operation <paramref name="OpId"/>.</summary>
[GenerateSerializer, Immutable]
public sealed record BranchMove([property: Id(0)] long OpId, [property: Id(1)] long From, [property: Id(2)] long[] To, [property: Id(3)] long Amount);

/// <summary>Credit <paramref name="Amount"/> to each of <paramref name="Accounts"/> (all of this branch) as operation <paramref name="OpId"/>.</summary>
[GenerateSerializer, Immutable]
public sealed record BranchCredit([property: Id(0)] long OpId, [property: Id(1)] long[] Accounts, [property: Id(2)] long Amount);

/// <summary>Set each of <paramref name="Accounts"/> (all of this branch) to <paramref name="Balance"/>, with no operation applied.</summary>
[GenerateSerializer, Immutable]
public sealed record BranchOpen([property: Id(0)] long[] Accounts, [property: Id(1)] long Balance);

public interface ILedgerBranch : ITransactionalActor, IGrainWithIntegerKey
{
    Task Open(TxnContext ctx, BranchOpen input);

    /// <summary>Withdraws from one account of this branch and credits the targets, here or on their branches.</summary>
    Task Move(TxnContext ctx, BranchMove input);

    Task Credit(TxnContext ctx, BranchCredit input);

    /// <summary>The accounts' states, read in one transaction across their branches, in the order asked.</summary>
    Task<LedgerState[]> ReadAll(TxnContext ctx, [Immutable] long[] accounts);

    Task<LedgerState[]> Read(TxnContext ctx, [Immutable] long[] accounts);
}

public sealed class LedgerBranch : KeyValueActor<long, LedgerState>, ILedgerBranch
{
    protected override ConcurrencyLevel Concurrency => LedgerBranches.IsKeyLevel(this.GetPrimaryKeyLong()) ? ConcurrencyLevel.Key : ConcurrencyLevel.Actor;

    public async Task Open(TxnContext ctx, BranchOpen input)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite, input.Accounts);
        foreach (var account in input.Accounts)
        {
            state.Put(account, new LedgerState { Balance = input.Balance });
        }
    }

    public async Task Move(TxnContext ctx, BranchMove input)
    {
        var here = this.GetPrimaryKeyLong();
        var state = await GetState(ctx, AccessMode.ReadWrite, input.From);
        var from = state.Get(input.From);
        var total = input.Amount * input.To.Length;
        if (from.Balance < total)
        {
            throw new LedgerOverdraftException($"balance {from.Balance} is less than {total}");
        }

        // Values are replaced, never changed in place: the stored object may be shared with the committed state.
        state.Put(input.From, new LedgerState { Balance = from.Balance - total, Applied = [.. from.Applied, input.OpId] });
        var credits = input.To.GroupBy(LedgerBranches.BranchOf).Select(branch => branch.Key == here
            ? Credit(ctx, new BranchCredit(input.OpId, [.. branch], input.Amount))
            : CallActor(ctx, GrainFactory.GetGrain<ILedgerBranch>(branch.Key).Credit, new BranchCredit(input.OpId, [.. branch], input.Amount)));
        await Task.WhenAll(credits);
    }

    public async Task Credit(TxnContext ctx, BranchCredit input)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite, input.Accounts);
        foreach (var account in input.Accounts)
        {
            var before = state.Get(account);
            state.Put(account, new LedgerState { Balance = before.Balance + input.Amount, Applied = [.. before.Applied, input.OpId] });
        }
    }

    public async Task<LedgerState[]> ReadAll(TxnContext ctx, long[] accounts)
    {
        var here = this.GetPrimaryKeyLong();
        var read = await Task.WhenAll(accounts.GroupBy(LedgerBranches.BranchOf).Select(async branch =>
        {
            var states = branch.Key == here
                ? await Read(ctx, [.. branch])
                : await CallActor(ctx, GrainFactory.GetGrain<ILedgerBranch>(branch.Key).Read, branch.ToArray());
            return branch.Zip(states);
        }));
        var byAccount = read.SelectMany(pairs => pairs).ToDictionary(p => p.First, p => p.Second);
        return [.. accounts.Select(a => byAccount[a])];
    }

    public async Task<LedgerState[]> Read(TxnContext ctx, long[] accounts)
    {
        var state = await GetState(ctx, AccessMode.Read, accounts);
        return [.. accounts.Select(state.Get)];
    }
}

/// <summary>A copy of a ledger branch's accounts (same id as its branch), each key following its account by dependency.</summary>
public interface ILedgerMirror : ITransactionalActor, IGrainWithIntegerKey
{
    /// <summary>Makes each of <paramref name="accounts"/> (all of this mirror's branch) follow its account there.</summary>
    Task Follow(TxnContext ctx, [Immutable] long[] accounts);

    Task<LedgerState?[]> Read(TxnContext ctx, [Immutable] long[] accounts);
}

public sealed class LedgerMirror : KeyValueActor<long, LedgerState>, ILedgerMirror
{
    protected override ConcurrencyLevel Concurrency => LedgerBranches.IsKeyLevel(this.GetPrimaryKeyLong()) ? ConcurrencyLevel.Key : ConcurrencyLevel.Actor;

    public async Task Follow(TxnContext ctx, long[] accounts)
    {
        var branch = GrainFactory.GetGrain<ILedgerBranch>(this.GetPrimaryKeyLong());
        await GetState(ctx, AccessMode.ReadWrite, accounts);
        foreach (var account in accounts)
        {
            await RegisterUpdateDependency(ctx, branch, account, account, new Snapper.KeyValue.Replicate<long, long, LedgerState>());
        }
    }

    public async Task<LedgerState?[]> Read(TxnContext ctx, long[] accounts)
    {
        var state = await GetState(ctx, AccessMode.Read, accounts);
        return [.. accounts.Select(account => state.TryGet(account, out var value) ? value : null)];
    }
}
