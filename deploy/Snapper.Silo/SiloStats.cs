using System.Diagnostics.Metrics;
using System.Globalization;
using System.Text;

namespace Snapper.Silo;

/// <summary>
/// Running totals of this silo's Snapper counters, rewritten to a small <c>key=value</c> file several times a second,
/// so that a client process (the runner's <c>--cluster-data</c>) can take the difference over a measured interval:
/// PACT batches emitted and the PACTs in them (on the master these are the global batches, on a worker its local
/// ones), and transactions committed and aborted by Snapper mode. Meters are per process; without this file what a
/// silo did is visible only through dotnet-counters.
/// </summary>
public sealed class SiloStats : IAsyncDisposable
{
    /// <summary>How often the file is rewritten: small against the runner's epochs of seconds.</summary>
    private static readonly TimeSpan Period = TimeSpan.FromMilliseconds(200);

    private readonly string _path;
    private readonly MeterListener _listener = new();
    private readonly CancellationTokenSource _stop = new();
    private readonly Task _writer;
    private readonly Dictionary<string, long> _totals = new(StringComparer.Ordinal);
    private readonly object _gate = new();

    public SiloStats(string path)
    {
        _path = path;
        Directory.CreateDirectory(Path.GetDirectoryName(path)!);
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Meter.Name == "Snapper" && instrument.Name is "snapper.pact.batch.size" or "snapper.txn.committed" or "snapper.txn.aborted")
            {
                listener.EnableMeasurementEvents(instrument);
            }
        };
        _listener.SetMeasurementEventCallback<int>((_, size, _, _) =>
        {
            Add("pact_batches", 1);
            Add("pact_batched", size);
        });
        _listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) =>
        {
            var mode = "";
            foreach (var tag in tags)
            {
                if (tag.Key == "mode")
                {
                    mode = tag.Value?.ToString()?.ToLowerInvariant() ?? "";
                }
            }

            Add($"{instrument.Name["snapper.txn.".Length..]}_{mode}", value);
        });
        _listener.Start();
        _writer = Task.Run(WriteLoopAsync);
    }

    public async ValueTask DisposeAsync()
    {
        _stop.Cancel();
        await _writer;
        _listener.Dispose();
        _stop.Dispose();
    }

    private void Add(string key, long value)
    {
        lock (_gate)
        {
            _totals[key] = _totals.GetValueOrDefault(key) + value;
        }
    }

    private async Task WriteLoopAsync()
    {
        using var timer = new PeriodicTimer(Period);
        do
        {
            Write();
        }
        while (await Next(timer));

        Write();
    }

    private async Task<bool> Next(PeriodicTimer timer)
    {
        try
        {
            return await timer.WaitForNextTickAsync(_stop.Token);
        }
        catch (OperationCanceledException)
        {
            return false;
        }
    }

    /// <summary>Writes a fresh file and renames it over the old one, so a reader never sees half of it.</summary>
    private void Write()
    {
        var text = new StringBuilder();
        lock (_gate)
        {
            foreach (var (key, value) in _totals.OrderBy(t => t.Key, StringComparer.Ordinal))
            {
                text.Append(key).Append('=').Append(value.ToString(CultureInfo.InvariantCulture)).Append('\n');
            }
        }

        try
        {
            var temporary = _path + ".tmp";
            File.WriteAllText(temporary, text.ToString());
            File.Move(temporary, _path, overwrite: true);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // A full or vanished disk must not stop the silo; the next period tries again.
        }
    }
}
