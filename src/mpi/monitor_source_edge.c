/* monitor_source_edge.c - PAPCOLL_ARRIVALS_EDGE: the program says when it will arrive
 * (papcoll_edge, papcoll_predict_arrival) and the prediction travels at once (Proficz 2018,
 * Sect. 3, Fig. 3-4). The protocol: before each call, every rank sends exactly one message to
 * every other rank: at its first edge() of the compute phase, else on entering the call; a
 * refused or missing prediction travels as NaN. Everyone then holds the same P values and
 * takes the same decision: all finite and within an hour of each other -> predictions;
 * else the ring (prr and slt with equal arrivals are the ring and the linear tree; the plain
 * ring is the fallback). A second edge() in one phase is ignored (monitor.c: predict).
 * AUTOMATIC uses the same exchange in its edge mode (monitor_source_automatic.c). */
#include <math.h>

#include "monitor_messages.h"
#include "monitor_source.h"

int monitor_exchange_predictions(papcoll_comm *pc, int *usable) {
    monitor_state *m = &pc->monitor;
    int code;
    if (!m->sent) { /* no prediction this phase: say so, so nobody waits for one */
        if ((code = monitor_send_to_all(pc, NAN, (double)m->calls)) != MPI_SUCCESS) return code;
    }
    if ((code = monitor_receive_from_all(pc, (double)m->calls)) != MPI_SUCCESS) return code;
    m->received[pc->rank] = m->outgoing[0];
    *usable = 1;
    for (int r = 0; r < pc->size; r++) *usable &= isfinite(m->received[r]);
    return MPI_SUCCESS;
}

void monitor_drain_predictions(papcoll_comm *pc) {
    monitor_state *m = &pc->monitor;
    int anyone_sent = 0;
    MPI_Allreduce(&m->sent, &anyone_sent, 1, MPI_INT, MPI_MAX, m->comm);
    if (anyone_sent && !m->sent) monitor_send_to_all(pc, NAN, (double)m->calls);
    if (anyone_sent) monitor_receive_from_all(pc, (double)m->calls);
}

static int always(const papcoll_comm *pc) {
    (void)pc;
    return 1;
}

static int nothing_to_learn(papcoll_comm *pc) {
    (void)pc;
    return MPI_SUCCESS;
}

const monitor_source monitor_source_edge = {
    .takes_predictions = 1,
    .sends_at_once = always,
    .gather = monitor_exchange_predictions,
    .finish_call = nothing_to_learn,
    .drain = monitor_drain_predictions,
};
