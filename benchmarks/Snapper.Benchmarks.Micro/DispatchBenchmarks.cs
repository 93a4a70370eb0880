using System.Reflection;
using BenchmarkDotNet.Attributes;
using Snapper.Actors;

namespace Snapper.Benchmarks.Micro;

public interface ICounterActor : ITransactionalActor
{
    Task<int> Add(TxnContext ctx, int amount);

    /// <summary>Returns before it finished, as a PACT's first method does while its calls run.</summary>
    Task<int> AddLater(TxnContext ctx, int amount);
}

/// <summary>An actor-shaped object, outside any silo: dispatch cost only, no grain runtime.</summary>
public sealed class CounterActor : ICounterActor
{
    private int _value;

    public Task<int> Add(TxnContext ctx, int amount) => Task.FromResult(_value += amount);

    public async Task<int> AddLater(TxnContext ctx, int amount)
    {
        await Task.Yield();
        return _value += amount;
    }

    public Task<TxnResponse> StartTxn(TxnRequest request) => throw new NotSupportedException();

}

/// <summary>
/// How an actor reaches the method a <see cref="CallRequest"/> names: Snapper's compiled per-type table against a
/// direct interface call (the floor) and reflection (what the table replaces).
/// </summary>
[MemoryDiagnoser]
public class DispatchBenchmarks
{
    private readonly CounterActor _actor = new();
    private readonly TxnContext _context = new(1, TxnMode.Act, default);
    private readonly object _input = 1;
    private readonly TransactionalMethodTable _table = TransactionalMethodTable.Build(typeof(CounterActor));
    private readonly MethodInfo _method = typeof(ICounterActor).GetMethod(nameof(ICounterActor.Add))!;

    [Benchmark(Baseline = true)]
    public async Task<object?> DirectCall() => await ((ICounterActor)_actor).Add(_context, (int)_input);

    [Benchmark]
    public ValueTask<object?> CompiledTable() => _table.Resolve(nameof(ICounterActor.Add), _input).Invoke(_actor, _context, _input);

    [Benchmark]
    public async Task<object?> Reflection() => await (Task<int>)_method.Invoke(_actor, [_context, _input])!;

    /// <summary>A method still running, awaited through the table's object-typed result (a callee's path).</summary>
    [Benchmark]
    public async Task<object?> RunningThroughInvoke() =>
        await _table.Resolve(nameof(ICounterActor.AddLater), _input).Invoke(_actor, _context, _input);

    /// <summary>The same, awaiting the method's own task and reading its result after (a PACT's first actor).</summary>
    [Benchmark]
    public async Task<object?> RunningThroughStart()
    {
        var method = _table.Resolve(nameof(ICounterActor.AddLater), _input);
        var task = method.Start(_actor, _context, _input);
        await task;
        return method.ResultOf(task);
    }

    [Benchmark]
    public string MethodName() => TransactionalMethod.NameOf((Func<TxnContext, int, Task<int>>)_actor.Add);
}
