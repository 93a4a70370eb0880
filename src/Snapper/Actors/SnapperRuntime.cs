using System.Collections.Concurrent;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Orleans.Serialization;
using Snapper.Act;
using Snapper.Coordination;
using Snapper.Diagnostics;
using Snapper.Hosting;
using Snapper.Pact;

namespace Snapper.Actors;

/// <summary>What every transactional actor of a silo shares: settings, method tables, copier, metrics and routing.</summary>
internal sealed class SnapperRuntime(
    IOptions<SnapperOptions> options,
    IGrainFactory grainFactory,
    DeepCopier copier,
    Serializer serializer,
    TransactionalMethodTables methods,
    SnapperMetrics metrics,
    PactService pacts,
    Logging.WriteAheadLog log,
    ActorDirectory actors,
    ActTidSource actTids,
    Cluster.ActorPlacementMap placement,
    Cluster.ClusterRoster roster,
    SnapperTestHooks testHooks,
    Migration.MigrationGate migrations,
    Migration.MigrationInbox inbox,
    Migration.PlacementDirectory directory,
    Orleans.Metadata.GrainInterfaceTypeResolver interfaceTypes,
    SiloCallKeys callKeys,
    Act.ParticipantWatchdog watchdog,
    GrainTypeSharedContextResolver grainTypes,
    ILoggerFactory loggerFactory)
{
    // Orleans resolves a reference's interface type from the CLR type on every GetGrain<T>(GrainId) (attribute lookups
    // and type-name formatting, a fifth of what a PACT allocated): Snapper's own two interfaces are resolved once here.
    private readonly GrainInterfaceType _participantType = interfaceTypes.GetGrainInterfaceType(typeof(IActParticipant));
    private readonly GrainInterfaceType _calleeType = interfaceTypes.GetGrainInterfaceType(typeof(IActorCallee));

    // One logger per actor class, not per actor: a logging provider may build a new logger on every CreateLogger call
    // (Serilog's does, with its own enricher chain and event-id cache, about 0.9 KB and 14 objects), and a silo keeps
    // the core of every actor that was active in it, so a logger per actor grew the heap by that much per actor.
    private readonly ConcurrentDictionary<Type, ILogger> _actorLoggers = new();

    public SnapperOptions Options { get; } = options.Value;

    /// <summary>This silo's key for Snapper's internal calls: what they carry, and what an actor checks them by.</summary>
    public SiloCallKeys CallKeys { get; } = callKeys;

    /// <summary>The logger of the actors of class <paramref name="actorClass"/> (created once per class and silo).</summary>
    public ILogger LoggerFor(Type actorClass) => _actorLoggers.GetOrAdd(actorClass, loggerFactory.CreateLogger);

    public TransactionalMethodTables Methods { get; } = methods;

    public SnapperMetrics Metrics { get; } = metrics;

    /// <summary>PACT ordering, batching, schedules and batch commit of this silo.</summary>
    public PactService Pacts { get; } = pacts;

    /// <summary>PACT ordering as a first actor sees it.</summary>
    public IPactOrdering Ordering { get; } = pacts;

    /// <summary>What is known of PACT batches (resolved, committed, delivered).</summary>
    public IBatchStatus Batches { get; } = pacts;

    /// <summary>Bounds the waits of ACT participants on this silo (one timer for every actor).</summary>
    public Act.ParticipantWatchdog Watchdog { get; } = watchdog;

    /// <summary>The silo-level core of every transactional actor that has been active here.</summary>
    public ActorDirectory Actors { get; } = actors;

    /// <summary>Actors frozen for a migration, as this silo sees them.</summary>
    public Migration.MigrationGate Migrations { get; } = migrations;

    /// <summary>Where actors live: their home, or their worker after a migration.</summary>
    public Cluster.ActorPlacementMap Placement { get; } = placement;

    /// <summary>This silo's copy of the directory of migrated actors.</summary>
    public Migration.PlacementDirectory Directory { get; } = directory;

    /// <summary>States of actors migrating to this worker, for their first activation here.</summary>
    public Migration.MigrationInbox Inbox { get; } = inbox;

    /// <summary>
    /// Whether <paramref name="actor"/> may serve from this silo: always embedded; in a cluster, when this worker is the
    /// one the placement map names (after a migration committed, the old worker's activation serves nothing more).
    /// </summary>
    public bool ServesHere(GrainId actor) => !Placement.Clustered || (Options.Role == SiloRole.Worker && Placement.WorkerOf(actor) == Options.WorkerIndex);

    /// <summary>
    /// How long a local call keeps an activation of <paramref name="grainType"/> from idle collection: twice the
    /// collection age Orleans applies to that class, or zero for a class Orleans never collects. Orleans counts only its
    /// own messages as activity, so an actor reached by local calls alone would look idle and be collected while in use
    /// (see <c>TransactionalActor.LocalCalls.cs</c>).
    /// </summary>
    public TimeSpan LocalCallKeepAlive(GrainType grainType)
    {
        // Orleans' own per-class context (it caches them) holds the age its collector uses: the class's attribute, the
        // silo's class-specific setting, or the silo's default.
        var age = grainTypes.GetComponents(grainType).CollectionAgeLimit;
        return age == Timeout.InfiniteTimeSpan || age <= TimeSpan.Zero ? TimeSpan.Zero : 2 * age;
    }

    /// <summary>Test-only switches (all off outside tests).</summary>
    public SnapperTestHooks TestHooks { get; } = testHooks;

    /// <summary>The silo's write-ahead log (<see cref="Logging.WriteAheadLog.Enabled"/> is false without a data folder).</summary>
    public Logging.WriteAheadLog Log { get; } = log;

    /// <summary>An actor state as a log record carries it: whole, or its changes for a state logged incrementally.</summary>
    public Logging.LoggedState LogForm(object state) => Logging.LoggedState.Of(state, serializer);

    /// <summary>An actor state as log bytes (Orleans' serializer; the type is recorded with it).</summary>
    public byte[] Serialize(object state) => serializer.SerializeToArray(state);

    /// <summary>
    /// A version of an actor's state as its log record carries it: the changes it made, for a state logged incrementally
    /// (a key-value actor's), else the whole state serialized.
    /// </summary>
    public Logging.LoggedState ForLog(object state) => Logging.LoggedState.Of(state, serializer);

    /// <summary>Orleans' serializer of the silo.</summary>
    public Serializer Serializer => serializer;

    /// <summary>An actor state read back from the log.</summary>
    public T Deserialize<T>(byte[] bytes) => (T)serializer.Deserialize<object>(bytes)!;

    /// <summary>ACT tids of this silo, from ranges reserved at the cluster's sequencer.</summary>
    public ActTidSource ActTids { get; } = actTids;

    /// <summary>
    /// Whether an ACT participant's outcome is decided on another silo than its own: in a cluster, when its first actor
    /// is placed on another worker. Its prepared state is then logged on its own silo (see <see cref="Logging.LoggedTxnKind.RemoteAct"/>).
    /// </summary>
    public bool DecidedElsewhere(GrainId participant, GrainId firstActor) =>
        Placement.Clustered && Placement.WorkerOf(participant) != Placement.WorkerOf(firstActor);

    /// <summary>
    /// The silo serving the worker of an ACT's first actor <paramref name="firstActor"/>, when that is not this silo's
    /// worker (null otherwise, and while no silo serves it): a participant notes it when it joins, and gives up its part
    /// once another silo or none serves there, since the first actor's silo died and the decision with it.
    /// </summary>
    public SiloAddress? FirstActorSilo(GrainId firstActor) =>
        Placement.Clustered && Placement.WorkerOf(firstActor) is var worker && worker != Options.WorkerIndex ? roster.WorkerSilo(worker) : null;

    public IActParticipant Participant(GrainId actor) => (IActParticipant)grainFactory.GetGrain(actor, _participantType);

    /// <summary>Snapper's internal call entry point of a transactional actor.</summary>
    public IActorCallee Callee(GrainId actor) => (IActorCallee)grainFactory.GetGrain(actor, _calleeType);

    /// <summary>
    /// Sends a call inside a transaction to <paramref name="actor"/>: a local call if its activation in this silo takes
    /// them (<see cref="ILocalCallee"/>), else an Orleans call (which also reaches actors not active yet, in other silos, or
    /// ending their activation).
    /// </summary>
    public ValueTask<CallResponse> SendCall(GrainId actor, CallRequest request) =>
        Actors.LocalCallee(actor)?.TryCallLocal(request) is { } local ? new(local) : Callee(actor).ExecuteCall(request);

    /// <summary>Sends an ACT's prepare to <paramref name="actor"/>, locally where it can (as <see cref="SendCall"/>).</summary>
    public Task<PrepareResult> SendPrepare(GrainId actor, ActPhaseRequest request) =>
        Actors.LocalCallee(actor)?.TryPrepareLocal(request) ?? Participant(actor).Prepare(request);

    /// <summary>Sends an ACT's commit to <paramref name="actor"/>, locally where it can (as <see cref="SendCall"/>).</summary>
    public Task SendCommit(GrainId actor, ActPhaseRequest request) =>
        Actors.LocalCallee(actor)?.TryCommitLocal(request) ?? Participant(actor).Commit(request);

    /// <summary>A private copy of committed state for one transaction; installed only if it commits.</summary>
    public T Copy<T>(T state) where T : class =>
        state is Logging.IIncrementallyLogged versioned ? (T)versioned.NewVersion() : copier.Copy(state)!;

    /// <summary>
    /// A private copy of a method's input or result as it passes between actors (the request types are
    /// <c>[Immutable]</c> to Orleans, so this is the only copy inside a silo; immutable values are not copied).
    /// </summary>
    public object? CopyValue(object? value) => value is null ? null : copier.Copy(value);

    /// <summary>
    /// Whether an exception, and every exception inside it, has an Orleans serializer. A user exception
    /// that has none would otherwise fail the whole response, and the caller would see a codec error
    /// instead of its abort.
    /// </summary>
    public bool CanTravel(Exception exception)
    {
        for (Exception? current = exception; current is not null; current = current.InnerException)
        {
            if (!serializer.CanSerialize(current.GetType()))
            {
                return false;
            }
        }

        return true;
    }
}
