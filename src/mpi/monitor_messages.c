/* monitor_messages.c - the message round of monitor_messages.h. Two doubles go eagerly: they
 * reach the receiver's queue without the sender calling MPI again, so a late rank's message
 * is there when the early ones reach the all-reduce although the late rank still computes
 * (monitor.c says why no thread and no non-blocking collective). */
#include "monitor_messages.h"

int monitor_wait_for_sends(monitor_state *m) {
    int code = MPI_Waitall(m->sends_in_flight, m->send_requests, MPI_STATUSES_IGNORE);
    m->sends_in_flight = 0;
    return code;
}

int monitor_send_to_all(papcoll_comm *pc, double value, double stamp) {
    monitor_state *m = &pc->monitor;
    int code = monitor_wait_for_sends(m); /* the buffer below is still theirs until then */
    if (code != MPI_SUCCESS) return record_error(code, "papcoll: monitor send failed");
    m->outgoing[0] = value;
    m->outgoing[1] = stamp;
    for (int peer = 0; peer < pc->size; peer++) {
        if (peer == pc->rank) continue;
        code = MPI_Isend(m->outgoing, 2, MPI_DOUBLE, peer, monitor_tag(m, MONITOR_PREDICTION_TAG),
                         m->comm, &m->send_requests[m->sends_in_flight++]);
        if (code != MPI_SUCCESS) return record_error(code, "papcoll: monitor send failed");
    }
    return MPI_SUCCESS;
}

/* Every receive is posted before any is waited for. One blocking receive after another
 * waited for messages that had long arrived on a real MPI; but in SMPI a buffered message
 * moves when its receive is posted, so P - 1 receives in a row cost P - 1 latencies, every
 * call in the edge mode (and at every period's end: a 1 KiB straggler call at P = 16 on
 * ethernet-1g took 1.26 ms there against 0.27 ms between). */
int monitor_receive_round(papcoll_comm *pc, double *incoming, int doubles, int tag) {
    monitor_state *m = &pc->monitor;
    for (int peer = 0; peer < pc->size; peer++) m->receives[peer] = MPI_REQUEST_NULL;
    for (int peer = 0; peer < pc->size; peer++) {
        if (peer == pc->rank) continue;
        int code = MPI_Irecv(incoming + (size_t)peer * (size_t)doubles, doubles, MPI_DOUBLE,
                             peer, monitor_tag(m, tag), m->comm, &m->receives[peer]);
        if (code != MPI_SUCCESS) {
            /* none may stay posted: a later round's message would land in it */
            for (int posted = 0; posted < peer; posted++)
                if (m->receives[posted] != MPI_REQUEST_NULL) MPI_Cancel(&m->receives[posted]);
            MPI_Waitall(pc->size, m->receives, MPI_STATUSES_IGNORE);
            return record_error(code, "papcoll: monitor receive failed");
        }
    }
    int code = MPI_Waitall(pc->size, m->receives, MPI_STATUSES_IGNORE);
    if (code != MPI_SUCCESS) return record_error(code, "papcoll: monitor receive failed");
    return MPI_SUCCESS;
}

int monitor_receive_from_all(papcoll_comm *pc, double expected_stamp) {
    monitor_state *m = &pc->monitor;
    int code = monitor_receive_round(pc, m->incoming_predictions, 2, MONITOR_PREDICTION_TAG);
    if (code != MPI_SUCCESS) return code;
    for (int peer = 0; peer < pc->size; peer++) {
        if (peer == pc->rank) continue;
        const double *message = m->incoming_predictions + 2 * (size_t)peer;
        if (message[1] != expected_stamp)
            return record_error(MPI_ERR_INTERN,
                                "papcoll: rank %d sent its prediction for monitored call %.0f "
                                "while rank %d is at call %.0f: the ranks do not make the "
                                "same sequence of calls on this communicator",
                                peer, message[1], pc->rank, expected_stamp);
        m->received[peer] = message[0];
    }
    return MPI_SUCCESS;
}
