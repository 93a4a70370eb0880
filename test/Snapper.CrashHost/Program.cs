using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Snapper.Hosting;

// Usage: Snapper.CrashHost <data folder> <silo port> <gateway port>. Prints "ready" once the silo accepts
// clients; runs until killed (the crash tests send SIGKILL) or stopped.
if (args.Length != 3 || !int.TryParse(args[1], out var siloPort) || !int.TryParse(args[2], out var gatewayPort))
{
    Console.Error.WriteLine("usage: Snapper.CrashHost <data folder> <silo port> <gateway port>");
    return 2;
}

var builder = Host.CreateApplicationBuilder();
builder.Logging.SetMinimumLevel(LogLevel.Warning).AddFilter("Snapper", LogLevel.Information);
builder.UseOrleans(silo => silo
    .UseLocalhostClustering(siloPort, gatewayPort)
    .AddSnapper(o =>
    {
        o.DataFolder = args[0];
        o.Loggers = 2;
        o.Coordinators = 4;

        // Far more often than in production, so that kills also land during checkpoints and segment deletion.
        o.CheckpointInterval = TimeSpan.FromMilliseconds(150);
    }));
using var host = builder.Build();
await host.StartAsync();
Console.WriteLine("ready");
await host.WaitForShutdownAsync();
return 0;
