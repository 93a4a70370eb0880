using Snapper.Hosting;
using Xunit;

namespace Snapper.Tests;

public sealed class OptionsTests
{
    [Fact]
    public void Defaults_are_valid()
    {
        Assert.True(new SnapperOptionsValidator().Validate(null, new SnapperOptions()).Succeeded);
    }

    [Fact]
    public void Settings_that_break_the_protocol_bounds_are_refused_with_their_names()
    {
        var result = new SnapperOptionsValidator().Validate(null, new SnapperOptions
        {
            Coordinators = 0,
            LockWaitTimeout = TimeSpan.Zero,
            ParticipantTimeout = TimeSpan.FromSeconds(1),
        });

        Assert.True(result.Failed);
        Assert.Contains(nameof(SnapperOptions.Coordinators), result.FailureMessage);
        Assert.Contains(nameof(SnapperOptions.LockWaitTimeout), result.FailureMessage);
        Assert.Contains($"{nameof(SnapperOptions.ParticipantTimeout)} (00:00:01) must exceed", result.FailureMessage);
    }
}
