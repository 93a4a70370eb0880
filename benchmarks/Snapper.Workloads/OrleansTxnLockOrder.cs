namespace Snapper.Workloads;

/// <summary>
/// How an Orleans Transactions baseline takes the locks of the actors a transaction reaches. Orleans Transactions (10.4.2)
/// detects no deadlock: a transaction waiting for a lock waits until the lock's holder times out, and a transaction
/// started by a grain call times out after 10 s, a constant of Orleans that <c>TransactionalStateOptions.LockTimeout</c>
/// cannot shorten (a lock is held at least as long as its transaction's timeout).
/// </summary>
public enum OrleansTxnLockOrder
{
    /// <summary>
    /// The writes in parallel, as NT and Snapper's modes make them. Two transactions that write two of the same actors
    /// can lock them in opposite orders and wait for each other until one times out: with two or more transactions in
    /// flight over shared actors, the baseline stalls for 10 s at a time.
    /// </summary>
    Parallel,

    /// <summary>
    /// One actor at a time in one global order (ascending keys; a workload whose transactions reach several kinds of actor
    /// ranks the kinds first): a transaction waits only for actors above every actor it holds, so no cycle of waits forms
    /// and no transaction deadlocks. The calls are sequential.
    /// </summary>
    Ascending,

    /// <summary>
    /// <see cref="Parallel"/> when one transaction is in flight, where there is nobody to deadlock with (the calls then
    /// overlap, as the other modes' do); <see cref="Ascending"/> with more, so the baseline never stalls.
    /// </summary>
    Auto,
}

/// <summary>How a baseline's lock order appears on its results.</summary>
public static class OrleansTxnLocks
{
    /// <summary>The parameter that names a baseline's <see cref="OrleansTxnLockOrder"/> on its results.</summary>
    public const string Parameter = "locks";

    /// <summary>The order every workload's baseline uses unless told otherwise, and the runner's default.</summary>
    public const OrleansTxnLockOrder Default = OrleansTxnLockOrder.Auto;

    /// <summary>The result parameter for <paramref name="order"/>: <c>locks=auto</c>, <c>locks=ascending</c> or <c>locks=parallel</c>.</summary>
    public static KeyValuePair<string, string> ParameterOf(OrleansTxnLockOrder order) => new(Parameter, order.ToString().ToLowerInvariant());

    /// <summary>The order a baseline with <paramref name="loops"/> transactions in flight takes its locks in under <paramref name="order"/>.</summary>
    public static OrleansTxnLockOrder Resolve(OrleansTxnLockOrder order, int loops) => order switch
    {
        OrleansTxnLockOrder.Auto => loops == 1 ? OrleansTxnLockOrder.Parallel : OrleansTxnLockOrder.Ascending,
        _ => order,
    };

    /// <summary>
    /// Makes <paramref name="calls"/> all at once (<see cref="OrleansTxnLockOrder.Parallel"/>), or one at a time in ascending
    /// order of their keys (<see cref="OrleansTxnLockOrder.Ascending"/>).
    /// </summary>
    public static async Task CallAsync(OrleansTxnLockOrder order, IEnumerable<(long Key, Func<Task> Call)> calls)
    {
        if (order == OrleansTxnLockOrder.Parallel)
        {
            await Task.WhenAll(calls.Select(call => call.Call()));
            return;
        }

        foreach (var (_, call) in calls.OrderBy(call => call.Key))
        {
            await call();
        }
    }
}
