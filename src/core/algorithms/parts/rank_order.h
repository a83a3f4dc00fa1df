/* rank_order.h - the check the builders that lay their ranks out in a given order
 * (ring_build_with_order, linear_tree_build_with_order) run first: the order must be a
 * permutation, and the builder needs this rank's position in it. */
#ifndef PAPCOLL_ALGORITHMS_PARTS_RANK_ORDER_H
#define PAPCOLL_ALGORITHMS_PARTS_RANK_ORDER_H

#include <stdint.h>

#include "../../hidden.h"
#include "../../schedule.h"

/* Position of `rank` in `order` (NULL: the identity, so `rank` itself). Checks that order
 * is a permutation of 0 .. ranks-1; if not, records PAPCOLL_ERR_ARGUMENT (or
 * PAPCOLL_ERR_NO_MEMORY) in out and returns -1. */
PAPCOLL_HIDDEN
int32_t rank_order_position(int32_t ranks, int32_t rank, const int32_t *order,
                            papcoll_schedule *out);

#endif /* PAPCOLL_ALGORITHMS_PARTS_RANK_ORDER_H */
