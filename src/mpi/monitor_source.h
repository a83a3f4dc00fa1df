/* monitor_source.h - where the monitor's arrivals come from (papcoll.h:
 * papcoll_arrival_source), behind one small interface chosen once, when the monitor is made
 * (monitor_source_for), so the monitor asks its source instead of testing which one it has
 * at every step (as Open MPI's coll components fill a table of functions at creation):
 *   EDGE       monitor_source_edge.c       predictions sent at edge(), received at the call;
 *   HISTORY    monitor_source_history.c    each rank's arrival in earlier calls;
 *   AUTOMATIC  monitor_source_automatic.c  periods of waits, and per-call predictions
 *                                          where they are worth their message round.
 * Every function is called on every rank alike and leaves the same decision everywhere:
 * every rank must build the same schedule. */
#ifndef PAPCOLL_MPI_MONITOR_SOURCE_H
#define PAPCOLL_MPI_MONITOR_SOURCE_H

#include "internal.h"

typedef struct monitor_source {
    /* Whether edge() and papcoll_predict_arrival make this phase's prediction (HISTORY:
     * no, it learns from the calls alone; a bad argument is still reported). */
    int takes_predictions;
    /* Whether a prediction goes to every other rank as soon as it is made (else it waits,
     * in monitor.outgoing, for the call); the same on every rank. */
    int (*sends_at_once)(const papcoll_comm *pc);
    /* At the call: P arrivals into monitor.received (any origin, on rank 0's clock) and
     * whether there are any, the same on every rank (monitor_gather then checks them). */
    int (*gather)(papcoll_comm *pc, int *usable);
    /* At the end of the call: what the source learns from it. */
    int (*finish_call)(papcoll_comm *pc);
    /* At release: receives what the source still has in flight, so that the communicator
     * can be freed (no error is reported: the communicator goes anyway). */
    void (*drain)(papcoll_comm *pc);
    /* What the source has learnt between calls: the P arrivals the next call without a
     * per-call prediction would build from, relative to the earliest; 0 where it has none
     * (NULL: the source learns nothing between calls, EDGE and HISTORY). */
    int (*learnt_arrivals)(const papcoll_comm *pc, double *arrivals);
    /* Whether it measures the calls monitor_tag_call tags (auto's closed loop needs it). */
    int measures_calls;
} monitor_source;

extern const monitor_source monitor_source_edge, monitor_source_history,
    monitor_source_automatic;

/* The source of config.arrival_source (checked by papcoll_comm_create). */
const monitor_source *monitor_source_for(papcoll_arrival_source source);

/* monitor_source_edge.c: the per-call exchange of predictions, EDGE's and AUTOMATIC's in
 * its edge mode. A rank that made none sends NaN, so nobody waits for it; *usable says
 * whether every prediction is finite. */
int monitor_exchange_predictions(papcoll_comm *pc, int *usable);
/* At release: predictions made after the last call; if any rank made one, the others
 * complete the round with NaN, and every rank receives it (collective). */
void monitor_drain_predictions(papcoll_comm *pc);

#endif /* PAPCOLL_MPI_MONITOR_SOURCE_H */
