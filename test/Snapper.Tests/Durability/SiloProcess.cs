using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;

namespace Snapper.Tests.Durability;

/// <summary>A silo (Snapper.CrashHost) in its own process on a data folder, with a client connected to it.</summary>
internal sealed class SiloProcess : IAsyncDisposable
{
    private readonly Process _process;
    private readonly IHost _client;

    private SiloProcess(Process process, IHost client)
    {
        _process = process;
        _client = client;
    }

    public IClusterClient Client => _client.Services.GetRequiredService<IClusterClient>();

    /// <summary>Starts the silo, waits for "ready" (after recovery), and connects a client.</summary>
    /// <summary>Starts a crash host silo on <paramref name="dataFolder"/> with <paramref name="loggers"/> loggers (1: one ordered log; more: states durable before votes).</summary>
    public static async Task<SiloProcess> StartAsync(string dataFolder, int loggers)
    {
        var (siloPort, gatewayPort) = (FreePort(), FreePort());
        var dotnet = Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") ?? "dotnet";
        var info = new ProcessStartInfo(dotnet)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (var argument in (string[])["exec", Path.Combine(AppContext.BaseDirectory, "Snapper.CrashHost.dll"), dataFolder, $"{siloPort}", $"{gatewayPort}", $"{loggers}"])
        {
            info.ArgumentList.Add(argument);
        }

        var process = Process.Start(info)!;
        var ready = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var output = new System.Collections.Concurrent.ConcurrentQueue<string>();
        process.OutputDataReceived += (_, e) =>
        {
            if (e.Data is null)
            {
                ready.TrySetException(new InvalidOperationException("The silo process ended before it was ready:\n" + string.Join("\n", output)));
                return;
            }

            output.Enqueue(e.Data);
            if (e.Data == "ready")
            {
                ready.TrySetResult();
            }
        };
        process.ErrorDataReceived += (_, e) => { if (e.Data is not null) output.Enqueue(e.Data); };
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        try
        {
            await ready.Task.WaitAsync(TimeSpan.FromSeconds(60));
        }
        catch
        {
            process.Kill(entireProcessTree: true);
            throw;
        }

        var client = new HostBuilder()
            .UseOrleansClient(c => c
                .UseLocalhostClustering(gatewayPort)
                .Configure<Orleans.Configuration.ClientMessagingOptions>(o => o.ResponseTimeout = TimeSpan.FromSeconds(5))
                .AddSnapperClient())
            .Build();
        await client.StartAsync();
        return new SiloProcess(process, client);
    }

    /// <summary>SIGKILL: the process ends at once, in whatever it was doing; nothing is flushed or closed.</summary>
    public async Task KillAsync()
    {
        _process.Kill(entireProcessTree: true);
        await _process.WaitForExitAsync();
    }

    public async ValueTask DisposeAsync()
    {
        if (!_process.HasExited)
        {
            await KillAsync();
        }

        try
        {
            await _client.StopAsync(TimeSpan.FromSeconds(1));
        }
        catch (Exception)
        {
            // The silo is gone; the client may complain about it while stopping.
        }

        _client.Dispose();
        _process.Dispose();
    }

    private static int FreePort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }
}
