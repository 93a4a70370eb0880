using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Snapper.Hosting;

// Usage: Snapper.CrashHost <data folder> <silo port> <gateway port> <loggers>. Prints "ready" once the silo
// accepts clients; runs until killed (the crash tests send SIGKILL) or stopped.
if (args.Length != 4 || !int.TryParse(args[1], out var siloPort) || !int.TryParse(args[2], out var gatewayPort)
    || !int.TryParse(args[3], out var loggers))
{
    Console.Error.WriteLine("usage: Snapper.CrashHost <data folder> <silo port> <gateway port> <loggers>");
    return 2;
}

var builder = Host.CreateApplicationBuilder();
builder.Logging.SetMinimumLevel(LogLevel.Warning).AddFilter("Snapper", LogLevel.Information);
builder.UseOrleans(silo => silo
    .UseLocalhostClustering(siloPort, gatewayPort)
    .AddSnapper(o =>
    {
        o.DataFolder = args[0];
        o.Loggers = loggers;
        o.Coordinators = 4;

        // Far more often than in production, so that kills also land during checkpoints and segment deletion.
        o.CheckpointInterval = TimeSpan.FromMilliseconds(150);
    }));
using var host = builder.Build();
await host.StartAsync();
Console.WriteLine("ready");
await host.WaitForShutdownAsync();
return 0;
