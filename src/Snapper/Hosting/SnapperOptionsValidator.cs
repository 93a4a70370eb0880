using Microsoft.Extensions.Options;

namespace Snapper.Hosting;

/// <summary>Rejects settings under which the protocol could not keep its bounds, with one message per problem.</summary>
internal sealed class SnapperOptionsValidator : IValidateOptions<SnapperOptions>
{
    public ValidateOptionsResult Validate(string? name, SnapperOptions options)
    {
        var errors = new List<string>();
        if (options.Coordinators < 1)
        {
            errors.Add($"{nameof(SnapperOptions.Coordinators)} must be at least 1 (was {options.Coordinators}).");
        }

        if (options.ActTidRangeSize < 1)
        {
            errors.Add($"{nameof(SnapperOptions.ActTidRangeSize)} must be at least 1 (was {options.ActTidRangeSize}).");
        }

        if (options.LogQueueCapacity < 1)
        {
            errors.Add($"{nameof(SnapperOptions.LogQueueCapacity)} must be at least 1 (was {options.LogQueueCapacity}).");
        }

        if (options.PactQueueCapacity < 1)
        {
            errors.Add($"{nameof(SnapperOptions.PactQueueCapacity)} must be at least 1 (was {options.PactQueueCapacity}).");
        }

        if (options.DataFolder is not null && options.Loggers < 1)
        {
            errors.Add($"{nameof(SnapperOptions.Loggers)} must be at least 1 (was {options.Loggers}).");
        }

        if (options.DataFolder is not null && options.LogSegmentBytes < 64 * 1024)
        {
            errors.Add($"{nameof(SnapperOptions.LogSegmentBytes)} must be at least 65536 (was {options.LogSegmentBytes}).");
        }

        if (options.CheckpointInterval < TimeSpan.Zero)
        {
            errors.Add($"{nameof(SnapperOptions.CheckpointInterval)} must be positive, or zero to turn checkpoints off (was {options.CheckpointInterval}).");
        }

        if (options.DataFolder is { Length: 0 })
        {
            errors.Add($"{nameof(SnapperOptions.DataFolder)} must be a path, or null to run without a write-ahead log.");
        }

        if (options.Role != SiloRole.Embedded && options.Workers is < 1 or > 64)
        {
            // A global PACT's context names the workers it touches in one 64-bit mask.
            errors.Add($"{nameof(SnapperOptions.Workers)} must be from 1 to 64 in a cluster (was {options.Workers}).");
        }

        if (options.HomeWorkers < 0 || options.HomeWorkers > options.Workers)
        {
            errors.Add($"{nameof(SnapperOptions.HomeWorkers)} must be from 1 to {nameof(SnapperOptions.Workers)} = {options.Workers}, or 0 for all of them (was {options.HomeWorkers}).");
        }

        if (options.Role == SiloRole.Worker && (options.WorkerIndex < 0 || options.WorkerIndex >= options.Workers))
        {
            errors.Add($"{nameof(SnapperOptions.WorkerIndex)} must be from 0 to {nameof(SnapperOptions.Workers)} - 1 = {options.Workers - 1} (was {options.WorkerIndex}).");
        }

        if (options.GlobalBatchInterval < TimeSpan.Zero)
        {
            errors.Add($"{nameof(SnapperOptions.GlobalBatchInterval)} must not be negative (was {options.GlobalBatchInterval}).");
        }

        Positive(nameof(SnapperOptions.LockWaitTimeout), options.LockWaitTimeout);
        Positive(nameof(SnapperOptions.HybridWaitTimeout), options.HybridWaitTimeout);
        Positive(nameof(SnapperOptions.ExecutionTimeout), options.ExecutionTimeout);
        Positive(nameof(SnapperOptions.PrepareTimeout), options.PrepareTimeout);
        Positive(nameof(SnapperOptions.ParticipantTimeout), options.ParticipantTimeout);
        Positive(nameof(SnapperOptions.DecisionTimeout), options.DecisionTimeout);
        Positive(nameof(SnapperOptions.OutcomeRetention), options.OutcomeRetention);
        Positive(nameof(SnapperOptions.LogWriteTimeout), options.LogWriteTimeout);

        // A participant must not give up on a transaction whose first actor may still legitimately run it.
        if (options.ParticipantTimeout <= options.ExecutionTimeout)
        {
            errors.Add($"{nameof(SnapperOptions.ParticipantTimeout)} ({options.ParticipantTimeout}) must exceed {nameof(SnapperOptions.ExecutionTimeout)} ({options.ExecutionTimeout}).");
        }

        if (options.OutcomeRetention <= options.ParticipantTimeout + options.DecisionTimeout)
        {
            errors.Add($"{nameof(SnapperOptions.OutcomeRetention)} ({options.OutcomeRetention}) must exceed {nameof(SnapperOptions.ParticipantTimeout)} + {nameof(SnapperOptions.DecisionTimeout)}.");
        }

        return errors.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(errors);

        void Positive(string setting, TimeSpan value)
        {
            if (value <= TimeSpan.Zero)
            {
                errors.Add($"{setting} must be positive (was {value}).");
            }
        }
    }
}
