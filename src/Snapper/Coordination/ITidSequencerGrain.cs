namespace Snapper.Coordination;

/// <summary>The single source of tid ranges for coordinators (key 0).</summary>
internal interface ITidSequencerGrain : IGrainWithIntegerKey
{
    /// <summary>Reserves <paramref name="count"/> consecutive tids and returns the first.</summary>
    Task<long> Reserve(int count);
}
