/* hierarchical.h - the two-level all-reduces built from groups of ranks (seed 003's HR1 and
 * HR2, seed 001's SMP-binomial and SMP-butterfly): the shared builders behind hr1.c, hr2.c,
 * smp_binomial.c and smp_butterfly.c. */
#ifndef PAPCOLL_ALGORITHMS_PARTS_HIERARCHICAL_H
#define PAPCOLL_ALGORITHMS_PARTS_HIERARCHICAL_H

#include <stdint.h>

#include "../../hidden.h"
#include "../../schedule.h"

/* Reduce to each group's leader (binomial tree inside the group), `outer` among the leaders,
 * broadcast from each leader (binomial tree). */
PAPCOLL_HIDDEN
int hierarchical_reduce_build(int32_t ranks, int32_t rank, int64_t count, int32_t elem_size,
                              const papcoll_context *context, const char *outer,
                              papcoll_schedule *out);

/* `inner` inside each group, then `outer` among the ranks with the same index in their
 * groups; with unequal groups, indices beyond the smallest group's size get the result from
 * member (index mod smallest size) of their own group. */
PAPCOLL_HIDDEN
int hierarchical_allreduce_build(int32_t ranks, int32_t rank, int64_t count, int32_t elem_size,
                                 const papcoll_context *context, const char *inner,
                                 const char *outer, papcoll_schedule *out);

#endif /* PAPCOLL_ALGORITHMS_PARTS_HIERARCHICAL_H */
