using Snapper.Scheduling;
using Xunit;

namespace Snapper.Tests.Units;

/// <summary>The schedule's map with one entry inline: it must behave exactly like a dictionary whatever the order of changes.</summary>
public sealed class InlineFirstMapTests
{
    private sealed record Box(int Value);

    [Fact]
    public void A_key_that_moved_to_the_dictionary_is_updated_there_after_the_inline_place_frees()
    {
        var map = new InlineFirstMap<Box>();
        map.Set(1, new Box(1));   // inline
        map.Set(2, new Box(2));   // dictionary
        Assert.True(map.Remove(1)); // the inline place is free now
        map.Set(2, new Box(20));  // must replace the dictionary's entry, not add a second one inline

        Assert.Equal(1, map.Count);
        Assert.Equal(20, map[2].Value);
        Assert.Equal([20], Values(map));
        Assert.True(map.Remove(2));
        Assert.False(map.ContainsKey(2));
        Assert.Equal(0, map.Count);
        Assert.Empty(Values(map));
    }

    [Fact]
    public void A_missing_key_is_reported_not_invented()
    {
        var map = new InlineFirstMap<Box>();
        Assert.False(map.TryGetValue(0, out _)); // 0 is also the inline key's default
        Assert.False(map.Remove(0));
        Assert.Throws<KeyNotFoundException>(() => map[0]);
        map.Set(5, new Box(5));
        Assert.False(map.TryGetValue(0, out _));
        Assert.Equal([5], map.Entries.Select(b => b.Value));
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public void Random_changes_leave_it_equal_to_a_dictionary(int seed)
    {
        var random = new Random(seed);
        var map = new InlineFirstMap<Box>();
        var model = new Dictionary<long, Box>();
        for (var step = 0; step < 20_000; step++)
        {
            long key = random.Next(6); // few keys: every path between the inline place and the dictionary is taken often
            switch (random.Next(3))
            {
                case 0:
                    var box = new Box(step);
                    map.Set(key, box);
                    model[key] = box;
                    break;
                case 1:
                    Assert.Equal(model.Remove(key, out var expected), map.Remove(key, out var removed));
                    Assert.Same(expected, removed);
                    break;
                default:
                    Assert.Equal(model.TryGetValue(key, out var want), map.TryGetValue(key, out var got));
                    Assert.Same(want, got);
                    break;
            }

            Assert.Equal(model.Count, map.Count);
            Assert.Equal(model.Values.Select(b => b.Value).Order(), Values(map).Order());
        }
    }

    private static List<int> Values(InlineFirstMap<Box> map)
    {
        var values = new List<int>();
        foreach (var box in map.Entries)
        {
            values.Add(box.Value);
        }

        return values;
    }
}
