/* ring.h - the ring all-reduce builder shared by ring, segmented_ring and the algorithms
 * that lay the ring out in an order of their own (ring_topology: Patarasuk & Yuan 2009,
 * Sect. 4.1's contention-free logical ring). The phases themselves are parts/ring_phases,
 * which straggler and pap_hierarchical run on rings of their own. */
#ifndef PAPCOLL_ALGORITHMS_RING_H
#define PAPCOLL_ALGORITHMS_RING_H

#include <stdint.h>

#include "../hidden.h"
#include "../schedule.h"

/* Builds rank `rank`'s ring all-reduce (reduce-scatter then all-gather, Patarasuk & Yuan
 * 2009, Sect. 4.1). order: the ranks in ring order (order[i] sits at ring position i and
 * sends to position i + 1), or NULL for 0, 1, ..., ranks-1; it must be a permutation of
 * the ranks. segment_elements: 0 = unsegmented (one message per block and step); otherwise
 * every block is cut into segments of this many elements that pipeline through the steps.
 * Returns the schedule's status (PAPCOLL_ERR_ARGUMENT with a message for a bad order). */
PAPCOLL_HIDDEN
int ring_build_with_order(int32_t ranks, int32_t rank, int64_t count, const int32_t *order,
                          int64_t segment_elements, papcoll_schedule *out);

#endif /* PAPCOLL_ALGORITHMS_RING_H */
