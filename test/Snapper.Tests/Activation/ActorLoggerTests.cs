using System.Collections.Concurrent;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Snapper.Tests.Actors;
using Xunit;

namespace Snapper.Tests.Activation;

/// <summary>
/// A silo keeps the core of every actor that was active in it, logger included, so the logger is made once per actor
/// class: a logging provider may build a new logger on every call (Serilog's factory does, about 0.9 KB each).
/// </summary>
public sealed class ActorLoggerTests
{
    [Fact]
    public async Task Actors_of_one_class_ask_the_logger_factory_once()
    {
        var factory = new CountingLoggerFactory();
        var cluster = await ClusterFixture.StartAsync(_ => { }, silo => silo.Services.AddSingleton<ILoggerFactory>(factory));
        try
        {
            var ids = ClusterFixture.NewIds(20);
            foreach (var id in ids)
            {
                var account = cluster.Client.GetGrain<IBankAccount>(id);
                await account.StartTxn(account.Reset, 100m);
            }

            Assert.Equal(1, factory.CreatedFor(typeof(BankAccount).FullName!));
        }
        finally
        {
            await cluster.DisposeAsync();
        }
    }

    /// <summary>Counts CreateLogger calls per category and, like Serilog's factory, builds a new logger for each.</summary>
    private sealed class CountingLoggerFactory : ILoggerFactory
    {
        private readonly ConcurrentDictionary<string, int> _created = new();

        public int CreatedFor(string category) => _created.GetValueOrDefault(category);

        public ILogger CreateLogger(string categoryName)
        {
            _created.AddOrUpdate(categoryName, 1, (_, count) => count + 1);
            return NullLoggerFactory.Instance.CreateLogger(categoryName);
        }

        public void AddProvider(ILoggerProvider provider)
        {
        }

        public void Dispose()
        {
        }
    }
}
