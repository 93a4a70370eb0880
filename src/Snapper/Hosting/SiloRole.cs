namespace Snapper.Hosting;

/// <summary>What a silo does in a Snapper cluster (thesis §4.2: SnapperD's master and workers).</summary>
public enum SiloRole
{
    /// <summary>
    /// One silo does everything: it orders, hosts every transactional actor it is asked to, and logs. The default; also
    /// what several silos without roles do (each orders the PACTs of its own actors, so a PACT must stay on one silo).
    /// </summary>
    Embedded,

    /// <summary>
    /// The master: the global coordinators that order and commit PACTs spanning workers, and the cluster's tid sequencer.
    /// It hosts no transactional actor. One per cluster.
    /// </summary>
    Master,

    /// <summary>
    /// A worker: its own PACT ordering (local PACTs are ordered and committed here alone), its log, and the share of
    /// transactional actors the placement assigns to its <see cref="SnapperOptions.WorkerIndex"/>.
    /// </summary>
    Worker,
}
