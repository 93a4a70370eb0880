using Snapper.Actors;
using Snapper.Hybrid;

namespace Snapper.Act;

/// <summary>
/// What the first actor of an ACT tells every participant in one phase of two-phase commit (<see cref="IActParticipant.Prepare"/>,
/// <see cref="IActParticipant.Commit"/>): who sends it (<paramref name="Sender"/>, see <see cref="SiloCallKeys"/>), the
/// transaction, its max(BeforeSet) (thesis §3.3.4.3), and, for prepare, whether it read from a batch that had not committed.
/// </summary>
/// <remarks>
/// One object per phase, shared by every participant of the phase. As separate value-type arguments they cost more:
/// Orleans reads a call's arguments one by one as objects (looking for cancellation tokens) when it sends the call and
/// again when it delivers it, so each value-type argument was boxed twice for every participant.
/// </remarks>
[GenerateSerializer, Immutable, Alias("snapper.act-phase")]
internal sealed record ActPhaseRequest(
    [property: Id(0)] SiloStamp Sender,
    [property: Id(1)] long Tid,
    [property: Id(2)] BatchPosition MaxBefore,
    [property: Id(3)] bool ReadUncommitted = false);
