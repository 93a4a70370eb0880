using Snapper.Logging;
using Xunit;

namespace Snapper.Tests.Durability;

/// <summary>The start-up warning for a log written inside a content root that the host watches for configuration changes.</summary>
public sealed class WatchedDataFolderCheckTests
{
    private static readonly string Root = Path.Combine(Path.GetTempPath(), "snapper-content-root");

    [Fact]
    public void A_log_below_a_watched_content_root_is_reported_with_both_ways_out()
    {
        var warning = WatchedDataFolderCheck.Warning(Path.Combine(Root, "data"), Root, reloadOnChange: null);

        Assert.NotNull(warning);
        Assert.Contains(Path.Combine(Root, "data"), warning);
        Assert.Contains("outside the content root", warning);
        Assert.Contains(WatchedDataFolderCheck.ReloadOnChangeKey, warning);
        Assert.NotNull(WatchedDataFolderCheck.Warning(Root + Path.DirectorySeparatorChar, Root, "true"));
    }

    [Fact]
    public void Nothing_is_reported_when_nothing_watches_the_log()
    {
        Assert.Null(WatchedDataFolderCheck.Warning(Path.Combine(Root, "data"), Root, reloadOnChange: "false"));
        Assert.Null(WatchedDataFolderCheck.Warning(Path.Combine(Path.GetTempPath(), "elsewhere"), Root, reloadOnChange: null));
        Assert.Null(WatchedDataFolderCheck.Warning(dataFolder: null, Root, reloadOnChange: null));
        Assert.Null(WatchedDataFolderCheck.Warning(Path.Combine(Root, "data"), contentRoot: null, reloadOnChange: null));
    }

    [Fact]
    public void A_sibling_folder_that_shares_the_roots_name_as_a_prefix_is_not_inside_it()
    {
        Assert.Null(WatchedDataFolderCheck.Warning(Root + "-data", Root, reloadOnChange: null));
    }

    [Fact]
    public void A_relative_data_folder_is_resolved_against_the_working_directory()
    {
        Assert.NotNull(WatchedDataFolderCheck.Warning("data", Directory.GetCurrentDirectory(), reloadOnChange: null));
        Assert.Null(WatchedDataFolderCheck.Warning("data", Root, reloadOnChange: null));
    }
}
