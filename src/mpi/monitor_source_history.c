/* monitor_source_history.c - PAPCOLL_ARRIVALS_HISTORY, for programs without edge(): after
 * each call every rank sends the time it entered the call (on rank 0's clock); before the
 * next call each rank receives those P values, and the prediction of rank i is a moving
 * average (weight 1/2) of its arrival minus the earliest arrival of the same call. The
 * first call has no history and runs the ring. */
#include <math.h>

#include "monitor_messages.h"
#include "monitor_source.h"

static int gather(papcoll_comm *pc, int *usable) {
    monitor_state *m = &pc->monitor;
    *usable = m->history_calls > 0;
    if (!*usable) return MPI_SUCCESS;
    int code = monitor_receive_from_all(pc, (double)(m->history_calls - 1));
    if (code != MPI_SUCCESS) return code;
    m->received[pc->rank] = m->outgoing[0];
    double earliest = INFINITY;
    for (int r = 0; r < pc->size; r++) earliest = fmin(earliest, m->received[r]);
    for (int r = 0; r < pc->size; r++) {
        double relative = m->received[r] - earliest;
        m->average[r] = m->history_calls == 1 ? relative : (m->average[r] + relative) / 2;
        m->received[r] = m->average[r];
    }
    return MPI_SUCCESS;
}

static int finish_call(papcoll_comm *pc) {
    monitor_state *m = &pc->monitor;
    int code = monitor_send_to_all(pc, m->arrival + m->clock_offset, (double)m->history_calls);
    m->history_calls++;
    return code;
}

/* The arrivals of the last call. */
static void drain(papcoll_comm *pc) {
    monitor_state *m = &pc->monitor;
    if (m->history_calls > 0) monitor_receive_from_all(pc, (double)(m->history_calls - 1));
}

static int never(const papcoll_comm *pc) {
    (void)pc;
    return 0;
}

const monitor_source monitor_source_history = {
    .takes_predictions = 0,
    .sends_at_once = never,
    .gather = gather,
    .finish_call = finish_call,
    .drain = drain,
};
