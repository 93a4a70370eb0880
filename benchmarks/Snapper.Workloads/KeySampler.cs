using MathNet.Numerics.Distributions;

namespace Snapper.Workloads;

/// <summary>
/// Draws actor indexes in [0, n) with a skewed distribution. The distribution's CDF is computed once (from
/// MathNet's Zipf PMF, or a hot set), so a draw is a binary search: MathNet's own <c>Zipf.Sample</c> costs
/// O(n) per draw, which would make the load generator the bottleneck. Ranks are mapped to indexes through a
/// fixed permutation so that hot actors are spread over the id space.
/// </summary>
public sealed class KeySampler : IKeyChooser
{
    private readonly double[] _cdf;
    private readonly int[] _rankToIndex;

    private KeySampler(double[] cdf, int seed)
    {
        _cdf = cdf;
        _rankToIndex = Enumerable.Range(0, cdf.Length).ToArray();
        new Random(seed).Shuffle(_rankToIndex);
    }

    public int Count => _cdf.Length;

    /// <summary>Zipf with constant <paramref name="s"/> over <paramref name="n"/> actors; s = 0 is uniform.</summary>
    public static KeySampler Zipf(int n, double s, int seed = 7)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(n, 1);
        ArgumentOutOfRangeException.ThrowIfNegative(s);
        var cdf = new double[n];
        var sum = 0.0;
        for (var k = 1; k <= n; k++)
        {
            sum += s == 0 ? 1.0 / n : MathNet.Numerics.Distributions.Zipf.PMF(s, n, k);
            cdf[k - 1] = sum;
        }

        return Normalized(cdf, seed);
    }

    /// <summary>A hot set: <paramref name="hotFraction"/> of the actors receive <paramref name="hotProbability"/> of the draws.</summary>
    public static KeySampler HotSet(int n, double hotFraction, double hotProbability = 0.9, int seed = 7)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(n, 1);
        var hot = Math.Clamp((int)Math.Round(n * hotFraction), 1, n);
        var cdf = new double[n];
        var sum = 0.0;
        for (var k = 0; k < n; k++)
        {
            sum += k < hot ? hotProbability / hot : (1 - hotProbability) / Math.Max(1, n - hot);
            cdf[k] = sum;
        }

        return Normalized(cdf, seed);
    }

    /// <summary>One draw.</summary>
    public int Next(Random random)
    {
        var rank = Array.BinarySearch(_cdf, random.NextDouble());
        rank = rank < 0 ? ~rank : rank;
        return _rankToIndex[Math.Min(rank, _cdf.Length - 1)];
    }

    /// <summary><paramref name="count"/> distinct draws.</summary>
    public int[] NextDistinct(Random random, int count)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThan(count, Count);
        var picked = new int[count];
        for (var i = 0; i < count; i++)
        {
            int candidate;
            do
            {
                candidate = Next(random);
            }
            while (Array.IndexOf(picked, candidate, 0, i) >= 0);

            picked[i] = candidate;
        }

        return picked;
    }

    private static KeySampler Normalized(double[] cdf, int seed)
    {
        var total = cdf[^1];
        for (var i = 0; i < cdf.Length; i++)
        {
            cdf[i] /= total;
        }

        return new KeySampler(cdf, seed);
    }
}
