using BenchmarkDotNet.Attributes;

namespace Snapper.Benchmarks.Micro;

public interface IAccountActor : ITransactionalActor
{
    Task Deposit(TxnContext ctx, int amount);
}

/// <summary>
/// An actor reference stand-in whose <c>StartTxn</c> answers only when the benchmark says so: the client's wrapper then
/// takes its asynchronous path, as it does against a silo, without any messaging in the measurement.
/// </summary>
public sealed class PendingAccountActor : IAccountActor
{
    private static readonly TxnResponse Committed = new(null);
    private TaskCompletionSource<TxnResponse>? _answer;

    public Task Deposit(TxnContext ctx, int amount) => throw new NotSupportedException();

    public Task<TxnResponse> StartTxn(TxnRequest request) => (_answer = new TaskCompletionSource<TxnResponse>()).Task;

    public void Answer() => _answer!.SetResult(Committed);
}

/// <summary>
/// What a client pays to submit one transaction with <c>StartTxn(actor.Method, input, accessInfo)</c> around the call to
/// the first actor: resolving the method's name, the request, and the state machines that wait for the answer.
/// </summary>
[MemoryDiagnoser]
public class SubmitBenchmarks
{
    private readonly PendingAccountActor _actor = new();
    private readonly ActorAccessInfo _accessInfo = new ActorAccessInfo().Add(GrainId.Create("account", "1"));

    [Benchmark(Baseline = true)]
    public Task DirectCall()
    {
        var call = _actor.StartTxn(new TxnRequest(nameof(IAccountActor.Deposit), 1, _accessInfo));
        _actor.Answer();
        return call;
    }

    [Benchmark]
    public Task Pact()
    {
        var txn = _actor.StartTxn(_actor.Deposit, 1, _accessInfo);
        _actor.Answer();
        return txn;
    }

    [Benchmark]
    public Task Act()
    {
        var txn = _actor.StartTxn(_actor.Deposit, 1);
        _actor.Answer();
        return txn;
    }
}
