/* arrival_order.h - the ranks sorted by predicted arrival time, as the PAP-aware algorithms
 * of Proficz 2018 (Sect. 4: slt, prr) lay out their chain or ring: the earliest first, ties
 * broken by rank, so every rank computes the same order from the same estimates. */
#ifndef PAPCOLL_ALGORITHMS_PARTS_ARRIVAL_ORDER_H
#define PAPCOLL_ALGORITHMS_PARTS_ARRIVAL_ORDER_H

#include <stdint.h>

#include "../../hidden.h"
#include "../../schedule.h"

/* Checks the context's arrival estimates (one finite time per rank) and fills order[i] with
 * the rank at position i (earliest first) and, if sorted_arrivals is not NULL, its arrival.
 * On bad estimates records PAPCOLL_ERR_ARGUMENT in out with a message naming the rank and
 * returns 0; returns 1 on success. `algorithm` names the caller in messages. */
/* order[i] = the index of the i-th earliest of times[0 .. count), ties by index, and, if
 * sorted_times is not NULL, its time: the one ordering rule of arrivals (ranks) and of
 * anything else ordered by a predicted time (pap_hierarchical's sites). 0 when out of
 * memory. */
PAPCOLL_HIDDEN
int time_order(const double *times, int32_t count, int32_t *order, double *sorted_times);

PAPCOLL_HIDDEN
int arrival_order(const papcoll_context *context, int32_t ranks, const char *algorithm,
                  int32_t *order, double *sorted_arrivals, papcoll_schedule *out);

/* How many of the last ranks of `sorted` (ascending predicted arrivals of `ranks` ranks)
 * the straggler layout treats as late: the m that minimises its predicted finish T(m) (see
 * straggler.c's header), tau being the time to move and reduce one `ranks`-th of the vector;
 * ties keep the smaller m. Shared by straggler and pap_hierarchical (per site). */
PAPCOLL_HIDDEN
int32_t late_rank_count(const double *sorted, int32_t ranks, double tau);

/* late_rank_count with relays allowed (straggler's large vectors): the late ranks predicted
 * well before the last may forward the finals down a chain, which spares the core ranks
 * those sends; the same predicted finish decides m and whether the chain is worth its hop.
 * Stores in *relay_count how many of the m late ranks, the earliest first, relay (0 or at
 * least 2). Returns m. */
PAPCOLL_HIDDEN
int32_t late_rank_layout(const double *sorted, int32_t ranks, double tau,
                         int32_t *relay_count);

/* Whether a vector is latency-bound for the late-rank schedules: its copies to the other
 * P - 1 ranks together stay within 64 KiB (or it has fewer elements than ranks). straggler
 * then sends whole vectors instead of pieces, pap_hierarchical uses one leader a site. */
PAPCOLL_HIDDEN
int latency_bound_vector(int64_t count, int32_t elem_size, int32_t ranks);

#endif /* PAPCOLL_ALGORITHMS_PARTS_ARRIVAL_ORDER_H */
