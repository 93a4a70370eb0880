using Orleans.TestingHost;
using Snapper.Hosting;
using Snapper.Tests.Actors;
using Xunit;

namespace Snapper.Tests;

/// <summary>
/// A caller inside the silo shares the <see cref="ActorAccessInfo"/> it passes to <c>StartTxn</c> with the PACT (requests
/// are not copied inside a silo), so the declaration can change while the PACT waits to be ordered. The PACT is then
/// ordered and finished by the declaration as it reads when it is ordered, never by a stale view of it.
/// </summary>
public sealed class SharedDeclarationTests : IAsyncLifetime
{
    private readonly SnapperTestHooks _hooks = new();
    private InProcessTestCluster _cluster = null!;

    public async Task InitializeAsync() => _cluster = await ClusterFixture.StartAsync(_ => { }, _hooks);

    public Task DisposeAsync() => _cluster.DisposeAsync().AsTask();

    private IBankAccount Account(long id) => _cluster.Client.GetGrain<IBankAccount>(id);

    private IProbe Probe(long id) => _cluster.Client.GetGrain<IProbe>(id);

    [Fact]
    public async Task A_pact_whose_declaration_grows_before_it_is_ordered_commits_and_releases_the_actor_it_never_called()
    {
        var (a, b, late) = (ClusterFixture.NewId(), ClusterFixture.NewId(), ClusterFixture.NewId());
        foreach (var id in new[] { a, b, late })
        {
            await Account(id).StartTxn(Account(id).Reset, 100m);
        }

        var (root, added) = (Account(a).GetGrainId(), Account(late).GetGrainId());
        var changed = 0;
        _hooks.BeforePactOrdered = info =>
        {
            // The first PACT rooted on `a`, just before it is ordered: it now declares `late` too, which it never calls.
            if (info.Accesses.ContainsKey(root) && Interlocked.CompareExchange(ref changed, 1, 0) == 0)
            {
                info.Add(added);
            }
        };
        try
        {
            await Account(a).StartTxn(Account(a).Transfer, new Transfer(1, b, 10m), ActorAccessInfo.Of(Account(a), Account(b)));
        }
        finally
        {
            _hooks.BeforePactOrdered = null;
        }

        Assert.Equal(1, changed);

        // The access to `late` was released when the PACT's first method returned: its batch committed (the transfer
        // above returned), and the next PACT on `late` is not held behind it.
        await Account(late).StartTxn(Account(late).Deposit, new Deposit(2, 5m), ActorAccessInfo.Of(Account(late)));
        Assert.Equal(
            new[] { 90m, 110m, 105m },
            new[]
            {
                await Account(a).StartTxn(Account(a).Balance, 0, ActorAccessInfo.Of(Account(a))),
                await Account(b).StartTxn(Account(b).Balance, 0, ActorAccessInfo.Of(Account(b))),
                await Account(late).StartTxn(Account(late).Balance, 0, ActorAccessInfo.Of(Account(late))),
            });
    }

    [Fact]
    public async Task A_pact_whose_declaration_changes_again_while_it_runs_releases_every_actor_it_was_ordered_with()
    {
        var (a, dropped, added) = (ClusterFixture.NewId(), ClusterFixture.NewId(), ClusterFixture.NewId());
        var root = Probe(a).GetGrainId();
        var gate = $"declaration-changed-twice-{a}";
        ActorAccessInfo? shared = null;
        _hooks.BeforePactOrdered = info =>
        {
            // Before it is ordered, the caller adds an actor; the PACT is ordered with a, `dropped` and `added`.
            if (info.Accesses.ContainsKey(root) && Interlocked.CompareExchange(ref shared, info, null) is null)
            {
                info.Add(Probe(added));
            }
        };
        try
        {
            var running = Probe(a).StartTxn(Probe(a).Hold, new Hold(gate, AccessMode.ReadWrite), ActorAccessInfo.Of(Probe(a), Probe(dropped)));
            await Gates.WhenReached(gate);

            // While its method runs, the caller takes out `dropped`, which got a sub-batch and which the PACT never calls.
            Assert.True(shared!.Accesses.Remove(Probe(dropped).GetGrainId()));
            Gates.Release(gate);
            await running;
        }
        finally
        {
            _hooks.BeforePactOrdered = null;
            Gates.Release(gate);
        }

        // Every actor it was ordered with was released when its first method returned, so its batch committed (above)
        // and the next PACT on each of them is not held behind it (finished by the declaration as it read at the end,
        // `dropped` would stay held until ExecutionTimeout aborted the batch).
        Assert.Equal(
            new[] { 1, 0, 0 },
            new[]
            {
                await Probe(a).StartTxn(Probe(a).Read, 0, ActorAccessInfo.Of(Probe(a))),
                await Probe(dropped).StartTxn(Probe(dropped).Read, 0, ActorAccessInfo.Of(Probe(dropped))),
                await Probe(added).StartTxn(Probe(added).Read, 0, ActorAccessInfo.Of(Probe(added))),
            });
    }
}
