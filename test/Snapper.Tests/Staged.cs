namespace Snapper.Tests;

/// <summary>Steps of a staged test: wait for a state the test itself brings about, never for a length of time.</summary>
internal static class Staged
{
    /// <summary>
    /// Waits until <paramref name="condition"/> holds. The bound (60 s unless given) only turns a state that never comes
    /// into a failure naming <paramref name="what"/>; a test must not rely on anything happening within it.
    /// </summary>
    public static async Task Until(Func<bool> condition, string what, TimeSpan? bound = null)
    {
        var limit = bound ?? TimeSpan.FromSeconds(60);
        var deadline = DateTime.UtcNow + limit;
        while (!condition())
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException($"not within {limit.TotalSeconds:0} s: {what}");
            }

            await Task.Delay(10);
        }
    }
}
