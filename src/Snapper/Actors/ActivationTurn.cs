using System.Runtime.CompilerServices;

namespace Snapper.Actors;

/// <summary>
/// Awaiting this moves the rest of an async method onto an activation's task scheduler: it continues as a turn of that
/// activation, queued behind the turns already waiting there, and every later await in it resumes there too (the
/// continuation runs as a task of that scheduler, which is then <see cref="TaskScheduler.Current"/>).
/// </summary>
internal readonly struct ActivationTurn(TaskScheduler turns) : ICriticalNotifyCompletion
{
    public ActivationTurn GetAwaiter() => this;

    /// <summary>Never: even a call from the activation to itself waits for a turn of its own, as an Orleans call would.</summary>
    public bool IsCompleted => false;

    public void GetResult()
    {
    }

    public void OnCompleted(Action continuation) =>
        Task.Factory.StartNew(continuation, CancellationToken.None, TaskCreationOptions.DenyChildAttach, turns);

    public void UnsafeOnCompleted(Action continuation) => OnCompleted(continuation);
}
