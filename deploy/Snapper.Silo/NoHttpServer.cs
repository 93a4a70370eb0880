using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Http.Features;

namespace Snapper.Silo;

/// <summary>
/// The HTTP server of a silo started with <c>--web-port off</c>: it listens nowhere. The silo is an ASP.NET Core host
/// (for the dashboard and the Prometheus endpoint), whose Kestrel would otherwise bind its default port even with no
/// endpoint mapped.
/// </summary>
internal sealed class NoHttpServer : IServer
{
    public IFeatureCollection Features { get; } = new FeatureCollection();

    public Task StartAsync<TContext>(IHttpApplication<TContext> application, CancellationToken cancellationToken)
        where TContext : notnull => Task.CompletedTask;

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public void Dispose()
    {
    }
}
