/* monitor_messages.h - the monitor's one message round: each rank sends {value, stamp} to
 * every other rank, eagerly, and later receives one from each. Predictions (EDGE, and
 * AUTOMATIC in its edge mode) and HISTORY's arrivals travel this way; the stamp is the
 * call's number, so ranks that make different sequences of calls are reported instead of
 * mixing calls. One unit because the sources and the monitor's own edge() all send
 * through it (monitor_source.h). */
#ifndef PAPCOLL_MPI_MONITOR_MESSAGES_H
#define PAPCOLL_MPI_MONITOR_MESSAGES_H

#include "internal.h"

/* Completes the sends of the last round (they are long done: eager). */
int monitor_wait_for_sends(monitor_state *m);
/* Sends {value, stamp} (kept in m->outgoing) to every other rank. */
int monitor_send_to_all(papcoll_comm *pc, double value, double stamp);
/* Receives `doubles` doubles from every other rank at incoming + rank x doubles (m->receives
 * holds the requests), every receive posted before any is waited for (the .c says why);
 * where a post fails, those posted are cancelled and completed before it returns. */
int monitor_receive_round(papcoll_comm *pc, double *incoming, int doubles, int tag);
/* Receives one {value, stamp} from every other rank into m->received[]; a stamp other than
 * expected_stamp is an error (MPI_ERR_INTERN, naming both calls). */
int monitor_receive_from_all(papcoll_comm *pc, double expected_stamp);

#endif /* PAPCOLL_MPI_MONITOR_MESSAGES_H */
