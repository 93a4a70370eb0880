using Snapper;

namespace Snapper.Tests.Actors;

/// <summary>
/// Actor classes Snapper must refuse: each has two transactional methods of one name. Orleans registers every grain
/// class of this assembly in every silo the tests start (the assembly's generated metadata lists them, and the
/// silo's <c>GrainTypeOptions.Classes</c> is filled from it), so left alone these would stop every test silo.
/// <c>ClusterFixture.StartAsync</c> removes <see cref="All"/> from that list; a test that wants one adds it back.
/// </summary>
internal static class DuplicateMethodActors
{
    public static IReadOnlyList<Type> All { get; } = [typeof(OverloadedActor), typeof(TwoInterfacesActor), typeof(GenericOverloadedActor<>)];
}

internal interface IOverloadedActor : ITransactionalActor, IGrainWithIntegerKey
{
    Task Add(TxnContext ctx, int amount);

    Task<int> Add(TxnContext ctx, string amount);
}

/// <summary>Overloads one transactional method.</summary>
internal sealed class OverloadedActor : TransactionalActor<ProbeState>, IOverloadedActor
{
    public async Task Add(TxnContext ctx, int amount) => (await GetState(ctx, AccessMode.ReadWrite)).Value += amount;

    public async Task<int> Add(TxnContext ctx, string amount) => (await GetState(ctx, AccessMode.ReadWrite)).Value += int.Parse(amount);
}

internal interface IResettable : ITransactionalActor, IGrainWithIntegerKey
{
    Task Reset(TxnContext ctx, int value);
}

internal interface ICounter : ITransactionalActor, IGrainWithIntegerKey
{
    Task Reset(TxnContext ctx, int value);

    Task<int> Read(TxnContext ctx, int unused);
}

/// <summary>Implements two transactional interfaces that both have a method named Reset, with one class method.</summary>
internal sealed class TwoInterfacesActor : TransactionalActor<ProbeState>, IResettable, ICounter
{
    public async Task Reset(TxnContext ctx, int value) => (await GetState(ctx, AccessMode.ReadWrite)).Value = value;

    public async Task<int> Read(TxnContext ctx, int unused) => (await GetState(ctx, AccessMode.Read)).Value;
}

internal interface IGenericOverloaded<T> : ITransactionalActor, IGrainWithIntegerKey
{
    Task Put(TxnContext ctx, T value);

    Task Put(TxnContext ctx, long value);
}

/// <summary>A generic actor class whose overloads collide whatever it is constructed with: the silo checks the open class.</summary>
internal sealed class GenericOverloadedActor<T> : TransactionalActor<ProbeState>, IGenericOverloaded<T>
{
    public async Task Put(TxnContext ctx, T value) => (await GetState(ctx, AccessMode.ReadWrite)).Value++;

    public async Task Put(TxnContext ctx, long value) => (await GetState(ctx, AccessMode.ReadWrite)).Value += (int)value;
}
