/* choice_sharing.c - auto's decision off the late rank's path ("decisions made
 * ahead, not on the late rank's path").
 *
 * Why. A decision that is not cached simulates every candidate: about 0.1 ms at P = 4, and
 * 30 - 90 ms at P = 64 - 128 (docs/benchmarks.md). Every rank used to decide for itself,
 * so the late rank, the one everybody waits for, simulated after its arrival, and every
 * rank's call grew by that much. But the ranks that arrive early wait anyway, and the
 * decision is the same on every rank (choose.c): so one early rank decides while it waits
 * and sends the decision; the late rank finds it in its queue on arrival (small messages
 * go eagerly) and pays one receive.
 *
 * Who decides: the rank predicted to arrive first (ties: the lowest rank), from the
 * arrivals every rank holds alike; rank 0 where there are none. A wrong prediction costs
 * only time: the others wait for the decider as they would for any late rank.
 *
 *   P = 4, rank 3 predicted late, a shape and profile not decided before:
 *     rank 0 arrives      decides (simulates)        0 -> 1, 2, 3: the decision
 *     ranks 1, 2 arrive   receive it (wait for 0 while it simulates: they wait anyway)
 *     rank 3 arrives      the decision is in its queue: one receive, no simulation
 *   every rank keeps it: the next call of that shape and profile sends nothing.
 *
 * Every rank must agree on whether a call misses, so every rank's cache holds the same
 * keys in the same order of use (choose.h says how that is kept); the message carries the
 * call's number, so ranks that disagree anyway are reported, not mixed up, and the call's
 * count and element size, so that a rank whose call differs from the decider's (an
 * erroneous program) returns an error naming both instead of going on (or, under the
 * drop-in, ends the job: the decider has gone on into the all-reduce and would wait for
 * this rank for ever; errors.c says why nothing cheaper helps it). The decider
 * sends to every other rank itself (P - 1 eager messages of ~350 bytes, about a
 * microsecond each, while it waits); a tree would put forwarding on ranks that may be
 * late. */
#include "choice_sharing.h"

#include <inttypes.h>
#include <string.h>

#include "monitor.h"

/* What travels: the call's number and shape, then the decision. The shape costs nothing
 * extra (the message goes anyway) and catches an erroneous program whose ranks pass
 * different counts before it reaches the MPI's own all-reduce: Open MPI 5.0's
 * reduce-scatter/allgather overruns its own buffer on such a call (docs/pmpi.md). */
typedef struct shared_decision {
    double call;
    int64_t count, extent;
    papcoll_choice report;
} shared_decision;

static int first_predicted(const choice_input *input) {
    int32_t first = 0;
    for (int32_t r = 1; input->arrivals != NULL && input->arrival_class != NULL &&
                        r < input->ranks;
         r++)
        if (input->arrivals[r] < input->arrivals[first]) first = r;
    return first;
}

int choice_share(papcoll_comm *pc, choice_cache *cache, const choice_input *input,
                 auto_choice *out) {
    if (choice_cache_find(input, cache, 1, out)) return MPI_SUCCESS;
    int decider = first_predicted(input);
    shared_decision message;
    memset(&message, 0, sizeof message);
    message.call = (double)pc->monitor.calls;
    message.count = input->count;
    message.extent = input->extent;
    MPI_Comm comm = pc->monitor.comm;
    int code = MPI_SUCCESS;
    if (pc->rank == decider) {
        choice_decide(input, out);
        out->report.decided_by = decider;
        message.report = out->report;
        for (int r = 0; r < pc->size; r++) {
            if (r == decider) continue;
            code = MPI_Send(&message, (int)sizeof message, MPI_BYTE, r, monitor_tag(&pc->monitor, MONITOR_DECISION_TAG), comm);
            if (code != MPI_SUCCESS)
                return record_error(code, "papcoll: auto could not send its decision to "
                                          "rank %d", r);
        }
    } else {
        code = MPI_Recv(&message, (int)sizeof message, MPI_BYTE, decider,
                        monitor_tag(&pc->monitor, MONITOR_DECISION_TAG),
                        comm, MPI_STATUS_IGNORE);
        if (code != MPI_SUCCESS)
            return record_error(code, "papcoll: auto could not receive the decision of rank "
                                      "%d", decider);
        if (message.call != (double)pc->monitor.calls)
            return record_mismatch(comm, MPI_ERR_INTERN,
                                "papcoll: rank %d decided auto's call %.0f while this rank "
                                "(%d) is in call %.0f: the ranks do not make the same "
                                "sequence of calls on this communicator",
                                decider, message.call, pc->rank, (double)pc->monitor.calls);
        if (message.count != input->count || message.extent != input->extent)
            return record_mismatch(comm, MPI_ERR_ARG,
                                "papcoll: the ranks disagree on the call: rank %d passed %"
                                PRId64 " elements of %" PRId64 " bytes, this rank (%d) %"
                                PRId64 " of %" PRId64 " (MPI requires the same count and "
                                "datatype on every rank)",
                                decider, message.count, message.extent, pc->rank, input->count,
                                input->extent);
        memset(out, 0, sizeof *out);
        out->report = message.report;
        choice_from_report(out);
    }
    choice_cache_keep(input, cache, out);
    return MPI_SUCCESS;
}
