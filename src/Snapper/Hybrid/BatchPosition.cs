namespace Snapper.Hybrid;

/// <summary>
/// A PACT batch's place in the one order of all batches that the hybrid check compares BeforeSets and AfterSets in
/// (thesis §3.3.4.3, Theorem 1: any numbering of the batches works if every batch-to-batch conflict follows it).
/// </summary>
/// <remarks>
/// <para>On one silo the numbering is the bid. In a cluster each worker numbers its own batches (local bids), and a
/// global batch has a part with its own local bid on every worker it touches, so bids of two workers cannot be
/// compared. Positions can: every batch gets <c>(Gbid, Stamp, Worker, Bid)</c>, compared in that order, where</para>
/// <list type="bullet">
/// <item>a global part is <c>(gbid, -inf)</c>: the same position on every worker, whatever its local bid there;</item>
/// <item>a local batch is <c>(g, stamp, worker, bid)</c>, with g the gbid of the last global part its worker emitted
/// before it (-1: none) and stamp the wall clock at emission, made increasing on the worker.</item>
/// </list>
/// <para>This order extends every worker's local order (which is all a batch-to-batch conflict can follow: conflicting
/// batches share an actor, hence a worker, and run there in bid order). A global part G sits after every batch its worker
/// emitted before it (their g is below G's gbid) and before every batch emitted after it (their g is at least G's gbid,
/// as global parts reach a worker in gbid order); two local batches of one worker are ordered by g, then by stamp, both
/// increasing with the bid. So the single-number theorem applies unchanged, and one comparison per ACT does the work of
/// the thesis's "1 + n" checks (§4.2.4). It is also what makes the check sound across workers: separate per-worker
/// and global checks would pass an ACT T whose cycle runs through another ACT (T2 after local batch B on worker 0 and
/// before local batch C on worker 1, T after C and before D on worker 0 with D &lt; B: every per-worker check passes,
/// yet B → T2 → C → T → D → B), because "not after" is not "before" in a partial order.</para>
/// <para>Local batches of different workers with the same g are unrelated in every worker's order, so any tie-break is
/// correct; the stamp makes it follow real time, which is the order ACTs see them in, and keeps false aborts rare. A
/// clock that is off only costs aborts, never correctness: the stamp is compared only between workers, and increases
/// within one.</para>
/// </remarks>
[GenerateSerializer, Immutable, Alias("snapper.batch-position")]
internal readonly record struct BatchPosition(
    [property: Id(0)] long Gbid,
    [property: Id(1)] long Stamp,
    [property: Id(2)] int Worker,
    [property: Id(3)] long Bid,
    [property: Id(4)] bool Exists) : IComparable<BatchPosition>
{
    /// <summary>No batch (also the default value): below every position.</summary>
    public static BatchPosition None => default;

    public bool IsNone => !Exists;

    /// <summary>A global part; <see cref="Worker"/> and <see cref="Bid"/> say where this copy was seen, and are not compared.</summary>
    public bool IsGlobal => Exists && Stamp == long.MinValue;

    /// <summary>A batch of an embedded silo: its bid is its position.</summary>
    public static BatchPosition Embedded(long bid) => new(-1, 0, 0, bid, true);

    /// <summary>Worker <paramref name="worker"/>'s part of global batch <paramref name="gbid"/>, with local bid <paramref name="bid"/>.</summary>
    public static BatchPosition GlobalPart(long gbid, int worker, long bid) => new(gbid, long.MinValue, worker, bid, true);

    /// <summary>A local batch of a worker, after global part <paramref name="lastGbid"/> there (-1: none).</summary>
    public static BatchPosition Local(long lastGbid, long stamp, int worker, long bid) => new(lastGbid, stamp, worker, bid, true);

    public int CompareTo(BatchPosition other)
    {
        if (IsNone || other.IsNone)
        {
            return IsNone == other.IsNone ? 0 : IsNone ? -1 : 1;
        }

        var byGbid = Gbid.CompareTo(other.Gbid);
        if (byGbid != 0)
        {
            return byGbid;
        }

        var byStamp = Stamp.CompareTo(other.Stamp);
        if (byStamp != 0 || IsGlobal)
        {
            return byStamp; // two copies of one global part are the same position
        }

        var byWorker = Worker.CompareTo(other.Worker);
        return byWorker != 0 ? byWorker : Bid.CompareTo(other.Bid);
    }

    /// <summary>Equal positions: the same batch (two copies of one global part are equal whatever their local bids).</summary>
    public bool Equals(BatchPosition other) => CompareTo(other) == 0;

    public override int GetHashCode() => IsNone ? 0 : IsGlobal ? HashCode.Combine(Gbid) : HashCode.Combine(Gbid, Stamp, Worker, Bid);

    public static bool operator <(BatchPosition left, BatchPosition right) => left.CompareTo(right) < 0;

    public static bool operator >(BatchPosition left, BatchPosition right) => left.CompareTo(right) > 0;

    public static bool operator <=(BatchPosition left, BatchPosition right) => left.CompareTo(right) <= 0;

    public static bool operator >=(BatchPosition left, BatchPosition right) => left.CompareTo(right) >= 0;

    public static BatchPosition Max(BatchPosition a, BatchPosition b) => a >= b ? a : b;

    public static BatchPosition Min(BatchPosition a, BatchPosition b) => a <= b ? a : b;

    public override string ToString() => IsNone ? "none"
        : IsGlobal ? $"global batch {Gbid}"
        : Stamp == 0 && Gbid < 0 ? $"batch {Bid}"
        : $"batch {Bid} of worker {Worker}";
}
