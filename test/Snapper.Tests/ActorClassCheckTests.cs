using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Orleans.Configuration;
using Snapper.Actors;
using Snapper.Hosting;
using Snapper.Logging;
using Snapper.Tests.Actors;
using Xunit;

namespace Snapper.Tests;

/// <summary>
/// Transactional methods are called by name, so an actor class with two of one name is refused when the silo starts,
/// with both methods named; and AddSnapper may be called twice.
/// </summary>
public sealed class ActorClassCheckTests : IDisposable
{
    private readonly string _folder = Path.Combine(Path.GetTempPath(), "snapper-tests", Guid.NewGuid().ToString("N"));

    public void Dispose()
    {
        if (Directory.Exists(_folder))
        {
            Directory.Delete(_folder, recursive: true);
        }
    }

    [Fact]
    public async Task A_silo_hosting_an_actor_class_with_an_overloaded_method_refuses_to_start_naming_both_methods()
    {
        var error = await StartRefused(typeof(OverloadedActor));

        Assert.Equal(typeof(OverloadedActor).FullName, error.ActorType);
        Assert.Equal(nameof(IOverloadedActor.Add), error.Method);
        Assert.Equal("Task Snapper.Tests.Actors.IOverloadedActor.Add(TxnContext, Int32)", error.First);
        Assert.Equal("Task<Int32> Snapper.Tests.Actors.IOverloadedActor.Add(TxnContext, String)", error.Second);
        Assert.Contains(error.First, error.Message);
        Assert.Contains(error.Second, error.Message);
    }

    [Fact]
    public async Task A_silo_hosting_an_actor_class_with_two_interfaces_sharing_a_method_name_refuses_to_start_naming_both()
    {
        var error = await StartRefused(typeof(TwoInterfacesActor));

        Assert.Equal(typeof(TwoInterfacesActor).FullName, error.ActorType);
        Assert.Equal(nameof(ICounter.Reset), error.Method);
        Assert.Equal(
            ["Task Snapper.Tests.Actors.ICounter.Reset(TxnContext, Int32)", "Task Snapper.Tests.Actors.IResettable.Reset(TxnContext, Int32)"],
            new[] { error.First, error.Second }.Order(StringComparer.Ordinal));
    }

    [Fact]
    public void An_open_generic_actor_class_is_checked_before_it_is_ever_constructed()
    {
        var check = new TransactionalActorClassCheck(Options.Create(GrainClasses(typeof(GenericOverloadedActor<>))), new TransactionalMethodTables());

        var error = Assert.Throws<DuplicateTransactionalMethodException>(check.CheckAll);

        Assert.Equal("Snapper.Tests.Actors.GenericOverloadedActor<T>", error.ActorType);
        Assert.Contains("Snapper.Tests.Actors.IGenericOverloaded<T>.Put(TxnContext, T)", error.Message);
        Assert.Contains("Snapper.Tests.Actors.IGenericOverloaded<T>.Put(TxnContext, Int64)", error.Message);
    }

    [Fact]
    public void Valid_classes_pass_and_their_tables_are_built_at_the_check()
    {
        var tables = new TransactionalMethodTables();
        var check = new TransactionalActorClassCheck(Options.Create(GrainClasses(typeof(Probe), typeof(BankAccount))), tables);

        check.CheckAll();

        Assert.Contains(nameof(IProbe.Hold), tables.For(typeof(Probe)).Names);
        Assert.Contains(nameof(IBankAccount.Transfer), tables.For(typeof(BankAccount)).Names);
    }

    [Fact]
    public void A_class_the_silo_did_not_check_is_still_refused_at_its_first_activation()
    {
        // The lazy path: TransactionalActor asks For(GetType()) when it activates.
        var error = Assert.Throws<DuplicateTransactionalMethodException>(() => new TransactionalMethodTables().For(typeof(OverloadedActor)));

        Assert.Equal(nameof(IOverloadedActor.Add), error.Method);
    }

    [Fact]
    public void AddSnapper_twice_adds_the_services_once()
    {
        var once = new ServiceCollection();
        new TestSiloBuilder(once).AddSnapper(o => o.Coordinators = 2);
        var twice = new ServiceCollection();
        new TestSiloBuilder(twice).AddSnapper(o => o.Coordinators = 2).AddSnapper(o => o.Loggers = 2);

        // The log, the class check, the watched data folder check, the silo key prefetcher, the in-doubt resolver, the
        // worker loss watcher, the placement directory refresher.
        Assert.Equal(7, Participants(once));
        Assert.Equal(Participants(once), Participants(twice));

        // The second call adds its configuration (one descriptor), nothing else.
        Assert.Equal(once.Count + 1, twice.Count);
    }

    [Fact]
    public async Task A_silo_with_AddSnapper_called_twice_starts_with_one_log_and_applies_both_configurations()
    {
        await using var cluster = await ClusterFixture.StartAsync(
            o => o.DataFolder = _folder,
            silo => silo.AddSnapper(o => o.Coordinators = 2));

        var services = cluster.GetSiloServiceProvider();
        var participants = services.GetServices<ILifecycleParticipant<ISiloLifecycle>>().ToArray();
        Assert.Single(participants.OfType<WriteAheadLog>());
        Assert.Single(participants.OfType<TransactionalActorClassCheck>());
        var options = services.GetRequiredService<IOptions<SnapperOptions>>().Value;
        Assert.Equal((_folder, 2), (options.DataFolder, options.Coordinators));

        var probe = cluster.Client.GetGrain<IProbe>(ClusterFixture.NewId());
        await probe.StartTxn(probe.Increment, 3);
        Assert.Equal(3, await probe.StartTxn(probe.Read, 0));
    }

    /// <summary>Starts a silo that hosts <paramref name="brokenClass"/> and returns why it did not start.</summary>
    private static async Task<DuplicateTransactionalMethodException> StartRefused(Type brokenClass)
    {
        var refused = await Assert.ThrowsAnyAsync<Exception>(() => ClusterFixture.StartAsync(
            _ => { },
            silo => silo.Services.PostConfigure<GrainTypeOptions>(o => o.Classes.Add(brokenClass))));

        // The silo's start fails with it; the test cluster may wrap it.
        for (Exception? at = refused; at is not null; at = at.InnerException)
        {
            if (at is DuplicateTransactionalMethodException duplicate)
            {
                return duplicate;
            }
        }

        throw new Xunit.Sdk.XunitException($"the start failed for another reason: {refused}");
    }

    private static GrainTypeOptions GrainClasses(params Type[] classes)
    {
        var options = new GrainTypeOptions();
        options.Classes.UnionWith(classes);
        return options;
    }

    private static int Participants(IServiceCollection services) =>
        services.Count(d => d.ServiceType == typeof(ILifecycleParticipant<ISiloLifecycle>));

    private sealed class TestSiloBuilder(IServiceCollection services) : ISiloBuilder
    {
        public IServiceCollection Services { get; } = services;

        public IConfiguration Configuration { get; } = new ConfigurationBuilder().Build();
    }
}
