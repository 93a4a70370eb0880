using Orleans.Concurrency;
using Snapper;

namespace Snapper.Workloads.KeyValueBank;

/// <summary>Withdraw <paramref name="Amount"/> times the deposits from each of <paramref name="From"/> here, and deposit <paramref name="Amount"/> to each key of each target.</summary>
[GenerateSerializer, Immutable]
public sealed record BranchTransfer([property: Id(0)] int[] From, [property: Id(1)] BranchDeposit[] To, [property: Id(2)] long Amount);

/// <summary>Deposit <paramref name="Amount"/> to each of <paramref name="Keys"/> of branch <paramref name="Branch"/>.</summary>
[GenerateSerializer, Immutable]
public sealed record BranchDeposit([property: Id(0)] long Branch, [property: Id(1)] int[] Keys, [property: Id(2)] long Amount);

/// <summary>Open <paramref name="Accounts"/> accounts (keys 0 to Accounts - 1), each with <paramref name="Balance"/>.</summary>
[GenerateSerializer, Immutable]
public sealed record BranchInit([property: Id(0)] int Accounts, [property: Id(1)] long Balance);

/// <summary>
/// A branch of SmallBank accounts for the SnapperX experiments (thesis Fig. 5.7): one actor, many accounts. Three
/// implementations that differ only in how state is kept, logged and scheduled.
/// </summary>
public interface IBranch : ITransactionalActor
{
    Task Init(TxnContext ctx, BranchInit input);

    /// <summary>MultiTransfer: withdraw here, deposit on the other branches (thesis §5.4.2, 4 actors, txnSize keys each).</summary>
    Task MultiTransfer(TxnContext ctx, BranchTransfer input);

    Task Deposit(TxnContext ctx, BranchDeposit input);

    Task<long> Sum(TxnContext ctx, int unused);
}

/// <summary>Accounts as one opaque state: every transaction copies and logs the whole branch (the thesis's "Snapper").</summary>
public interface IOpaqueBranch : IBranch, IGrainWithIntegerKey;

/// <summary>Accounts as keys of a key-value actor at actor level: a transaction logs only the accounts it changed ("Snapper+").</summary>
public interface IKeyValueBranch : IBranch, IGrainWithIntegerKey;

/// <summary>Accounts as keys of a key-value actor at key level: PACTs declare their accounts, ACTs lock them one by one ("SnapperX").</summary>
public interface IKeyLevelBranch : IBranch, IGrainWithIntegerKey;

[GenerateSerializer]
public sealed class BranchState
{
    [Id(0)] public Dictionary<int, long> Balances { get; set; } = new();
}

public sealed class OpaqueBranch : TransactionalActor<BranchState>, IOpaqueBranch
{
    public async Task Init(TxnContext ctx, BranchInit input)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite);
        state.Balances = Enumerable.Range(0, input.Accounts).ToDictionary(key => key, _ => input.Balance);
    }

    public async Task MultiTransfer(TxnContext ctx, BranchTransfer input)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite);
        foreach (var key in input.From)
        {
            state.Balances[key] -= input.Amount * input.To.Length;
        }

        await Task.WhenAll(input.To.Select(to => CallActor(ctx, GrainFactory.GetGrain<IOpaqueBranch>(to.Branch).Deposit, to)));
    }

    public async Task Deposit(TxnContext ctx, BranchDeposit input)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite);
        foreach (var key in input.Keys)
        {
            state.Balances[key] += input.Amount;
        }
    }

    public async Task<long> Sum(TxnContext ctx, int unused) => (await GetState(ctx, AccessMode.Read)).Balances.Values.Sum();
}

/// <summary>The key-value branch; <see cref="Peer"/> names a branch of the same kind.</summary>
public abstract class KeyValueBranchBase(ConcurrencyLevel level) : KeyValueActor<int, long>(level)
{
    protected abstract IBranch Peer(long branch);

    public async Task Init(TxnContext ctx, BranchInit input)
    {
        var keys = Enumerable.Range(0, input.Accounts).ToArray();
        var state = await GetState(ctx, AccessMode.ReadWrite, keys);
        foreach (var key in keys)
        {
            state.Put(key, input.Balance);
        }
    }

    public async Task MultiTransfer(TxnContext ctx, BranchTransfer input)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite, input.From);
        foreach (var key in input.From)
        {
            state.Put(key, state.Get(key) - input.Amount * input.To.Length);
        }

        await Task.WhenAll(input.To.Select(to => CallActor(ctx, Peer(to.Branch).Deposit, to)));
    }

    public async Task Deposit(TxnContext ctx, BranchDeposit input)
    {
        var state = await GetState(ctx, AccessMode.ReadWrite, input.Keys);
        foreach (var key in input.Keys)
        {
            state.Put(key, state.Get(key) + input.Amount);
        }
    }

    public async Task<long> Sum(TxnContext ctx, int unused) => (await GetState(ctx, AccessMode.Read)).Entries.Values.Sum();
}

public sealed class KeyValueBranch() : KeyValueBranchBase(ConcurrencyLevel.Actor), IKeyValueBranch
{
    protected override IBranch Peer(long branch) => GrainFactory.GetGrain<IKeyValueBranch>(branch);
}

public sealed class KeyLevelBranch() : KeyValueBranchBase(ConcurrencyLevel.Key), IKeyLevelBranch
{
    protected override IBranch Peer(long branch) => GrainFactory.GetGrain<IKeyLevelBranch>(branch);
}
