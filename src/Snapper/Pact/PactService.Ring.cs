using Microsoft.Extensions.Logging;
using Snapper.Coordination;

namespace Snapper.Pact;

/// <summary>
/// The coordinator ring (thesis §3.3.2.1-2): the token visits coordinators with work, each turns what it accumulated into
/// a batch, delivers the sub-batches and passes the token on; an idle ring parks the token.
/// </summary>
internal sealed partial class PactService
{
    /// <remarks>
    /// The visit goes to the thread pool's global queue, behind the actor turns already waiting, not to this thread's own
    /// queue, which the thread empties newest first: there the token would come back before any PACT's actors ran, every
    /// batch would hold one PACT, and the waits it skipped would land on the latency's tail instead (measured on
    /// SmallBank at 16 in flight: one PACT per batch, p50 0.10 ms and p99 8 ms, against about 4 PACTs, 0.55 and 1.6 ms).
    /// </remarks>
    private void Pass(PactToken token, int to) =>
        ThreadPool.UnsafeQueueUserWorkItem(static state => _ = state.Service.VisitAsync(state.To, state.Token), (Service: this, To: to % _ring.Length, Token: token), preferLocal: false);

    /// <summary>The token arrives at coordinator <paramref name="index"/>: form a batch of what it accumulated, emit it, pass the token on.</summary>
    private async Task VisitAsync(int index, PactToken token)
    {
        var pacts = _ring[index].Drain();
        if (pacts.Count > 0)
        {
            _queueRoom.Release(pacts.Count);
        }

        // Global sub-batches that arrived are merged first, whichever coordinator holds the token, in arrival order.
        var global = IsClustered && HasGlobalArrived;
        if (pacts.Count > 0 || global)
        {
            try
            {
                var needed = pacts.Count + (global ? 1_024 : 0);
                if (token.NextTid + needed > token.RangeEnd)
                {
                    var size = Math.Max(MinTidRange, needed);
                    token.NextTid = await _tidRanges.ReserveAsync(size);
                    token.RangeEnd = token.NextTid + size;
                }

                if (global)
                {
                    EmitGlobal(token);
                }

                Emit(pacts, token);
            }
            catch (Exception exception)
            {
                _logger.LogError(exception, "Coordinator {Index} could not order {Count} PACT(s)", index, pacts.Count);
                foreach (var pact in pacts)
                {
                    pact.Ticket.TrySetException(new TransactionAbortedException(0, AbortReason.OrderingFailed,
                        $"no transaction id could be reserved for it: {exception.Message}; nothing of it ran."));
                }
            }
        }

        PassOn(token, index);
    }

    /// <summary>
    /// Passes the token around the ring from <paramref name="from"/> to the next coordinator that has work. A
    /// coordinator with nothing to batch would only hand the token on, so it is skipped; with no work anywhere the
    /// token is parked (no thread spins), and the next submission takes it.
    /// </summary>
    private void PassOn(PactToken token, int from)
    {
        for (var step = 1; step <= _ring.Length; step++)
        {
            var next = (from + step) % _ring.Length;
            if (_ring[next].HasPending || (step == 1 && IsClustered && HasGlobalArrived))
            {
                Pass(token, next);
                return;
            }
        }

        // Parked with a full fence (not a plain volatile write, which may be reordered after the reads below): a
        // submitter enqueues and then exchanges _parked, this side exchanges _parked and then reads the queues, so at
        // least one of the two sees the other's write and nobody's PACT waits for the next submission.
        Interlocked.Exchange(ref _parked, token);

        // A submission that came after the scan, but before the token was parked, found no parked token to
        // wake: look once more, so it is not left waiting.
        foreach (var coordinator in _ring)
        {
            if ((coordinator.HasPending || (IsClustered && HasGlobalArrived)) && Interlocked.Exchange(ref _parked, null) is { } again)
            {
                Pass(again, coordinator.Index);
                return;
            }
        }
    }

    private void Emit(List<PendingPact> pacts, PactToken token)
    {
        // Withdrawn submissions (they timed out waiting) are not ordered at all.
        pacts.RemoveAll(pact => pact.Ticket.Task.IsCompleted);
        if (pacts.Count == 0)
        {
            return;
        }

        if (Volatile.Read(ref _commitStopped))
        {
            foreach (var pact in pacts)
            {
                pact.Ticket.TrySetException(new TransactionAbortedException(0, AbortReason.LogWriteFailed,
                    "PACT commits are stopped in this silo after a failed write-ahead log write; restart the silo. Nothing of it ran."));
            }

            return;
        }

        var bid = token.NextTid;
        PactTicket[] tickets;
        while (true)
        {
            token.NextTid = bid;

            var subBatches = token.SubBatches;
            subBatches.Clear();
            var outcome = new TaskCompletionSource<SnapperException?>(TaskCreationOptions.RunContinuationsAsynchronously);
            tickets = new PactTicket[pacts.Count];
            for (var i = 0; i < pacts.Count; i++)
            {
                var tid = token.NextTid++;
                var pact = pacts[i];
                _testHooks.BeforePactOrdered?.Invoke(pact.AccessInfo);
                var emitted = EmittedSchedules(pact);
                var declared = 0;
                foreach (var (actor, accesses) in pact.AccessInfo.Accesses)
                {
                    subBatches.Add(actor, new Scheduling.PactAccess(tid, accesses, pact.AccessInfo.KeysOf(actor)), emitted[declared++]);
                }

                tickets[i] = new PactTicket(tid, bid) { Outcome = outcome.Task, Schedules = emitted };
            }

            lock (_gate)
            {
                // Checked under the lock a freeze takes (Freeze): a PACT declaring a frozen actor is not emitted here, nor
                // one that was local when it was submitted but declares an actor that has moved away since (a migration
                // flips the map before it releases the freeze, so a PACT that waited in the ring sees the new map here).
                if (!AnyMustReroute(pacts))
                {
                    Register(new PactBatch(bid, bid + pacts.Count - 1, subBatches.Participants(), outcome), subBatches);
                    break;
                }
            }

            foreach (var held in pacts.Where(MustReroute).ToArray())
            {
                held.Ticket.TrySetException(new MigrationReroute());
                pacts.Remove(held);
            }

            if (pacts.Count == 0)
            {
                token.NextTid = bid;
                return;
            }
        }

        _metrics.BatchEmitted(pacts.Count);
        for (var i = 0; i < pacts.Count; i++)
        {
            _metrics.PactOrdered(pacts[i].EnqueuedAt);
            if (!pacts[i].Ticket.TrySetResult(tickets[i]))
            {
                // Withdrawn after it was drained: nobody will run it, so its batch (and the later ones) must not wait.
                Abort(tickets[i], new TransactionAbortedException(tickets[i].Tid, AbortReason.OrderingFailed, "it was withdrawn while being ordered."));
            }
        }
    }

    /// <summary>
    /// The schedules of the actors <paramref name="pact"/> declares as it is emitted, in declaration order: the ones its
    /// submitter looked up, unless the declaration changed since (a caller in this silo shares its ActorAccessInfo with
    /// the PACT and could change it while the PACT waits), in which case they are looked up here.
    /// </summary>
    /// <remarks>
    /// The ticket keeps this array, and the PACT is finished by it, not by the declaration as it reads when its first
    /// method returns: whatever the caller does to the object after emission, every actor that got a sub-batch is
    /// released, and none that did not. The common case returns the submitter's array and allocates nothing.
    /// </remarks>
    private Scheduling.ActorSchedule[] EmittedSchedules(PendingPact pact)
    {
        var submitted = pact.Schedules;
        var accesses = pact.AccessInfo.Accesses;
        var emitted = submitted.Length == accesses.Count ? submitted : new Scheduling.ActorSchedule[accesses.Count];
        var declared = 0;
        foreach (var actor in accesses.Keys)
        {
            var fits = declared < submitted.Length && submitted[declared].Actor == actor;
            if (!fits && ReferenceEquals(emitted, submitted))
            {
                emitted = new Scheduling.ActorSchedule[accesses.Count];
                Array.Copy(submitted, emitted, declared);
            }

            if (!ReferenceEquals(emitted, submitted))
            {
                emitted[declared] = fits ? submitted[declared] : ScheduleOf(actor);
            }

            declared++;
        }

        return emitted;
    }

    /// <summary>Whether a drained PACT must go back to its submitter to be routed again (see <see cref="MigrationReroute"/>).</summary>
    // A loop, not Any(MustReroute): a method group would make a delegate for every batch.
    private bool AnyMustReroute(List<PendingPact> pacts)
    {
        foreach (var pact in pacts)
        {
            if (MustReroute(pact))
            {
                return true;
            }
        }

        return false;
    }

    private bool MustReroute(PendingPact pact) =>
        (!_migrations.IsEmpty && _migrations.AnyFrozen(pact.AccessInfo.Accesses.Keys)) || (IsClustered && !IsLocal(pact.AccessInfo));

    /// <summary>
    /// Registers an emitted batch and delivers its sub-batches, each with the actor's prev_bid (under
    /// <see cref="_gate"/>, by the token holder, so batches are registered and delivered in bid order).
    /// </summary>
    private void Register(PactBatch batch, SubBatchBuilder subBatches)
    {
        if (_lastBid < 0)
        {
            // The first batch of this silo's incarnation: an older bid is one this silo no longer knows (committed before a
            // restart, or lost in it), and a question about it must not be answered "committed" (hybrid commit rule).
            _forgottenBelow = Math.Max(_forgottenBelow, batch.Bid - 1);
        }

        Volatile.Write(ref _lastBid, batch.Bid);
        batch.Position = NextPosition(batch);
        _uncommitted.Add(batch.Bid, batch);
        _executing[batch.Bid] = batch;
        if (Log.Enabled)
        {
            _notCommitting.Enqueue(batch);
        }

        // Participants were taken from the builder, sub-batch for sub-batch. A local batch's schedules were found by its
        // submitters, on their own turns: this runs for every batch under _gate, and each lookup in the map of every
        // actor's schedule is a few cache misses (its bucket, its entry, the key's bytes).
        var schedules = new Scheduling.ActorSchedule[batch.Participants.Length];
        for (var i = 0; i < schedules.Length; i++)
        {
            var schedule = schedules[i] = subBatches.ScheduleAt(i) ?? ScheduleOf(subBatches.ActorAt(i));
            var prev = schedule.LastEmittedBid;
            schedule.LastEmittedBid = batch.Bid;
            schedule.Deliver(batch.Bid, prev, subBatches.AccessesAt(i), batch.Position);
        }

        batch.Schedules = schedules;
    }
}
