/* hierarchical.h - the two-level all-reduces built from groups of ranks (Proficz et al.'s HR1 and
 * HR2, Patarasuk & Yuan 2009's SMP-binomial and SMP-butterfly): the shared builders behind hr1.c,
 * hr2.c, smp_binomial.c and smp_butterfly.c. */
#ifndef PAPCOLL_ALGORITHMS_PARTS_HIERARCHICAL_H
#define PAPCOLL_ALGORITHMS_PARTS_HIERARCHICAL_H

#include <stdint.h>

#include "../../hidden.h"
#include "../../schedule.h"

/* The groups of a context: context->groups gives any id per rank; a group's members are its
 * ranks in rank order, member 0 (the lowest rank) its leader for hr1, and groups are numbered
 * by their lowest ranks. */
typedef struct hierarchy {
    int32_t group_count;
    int32_t *group_first;   /* group g's members are members[group_first[g] .. group_first[g+1]) */
    int32_t *members;       /* ranks, grouped, in rank order within a group */
    int32_t my_group, my_index;
} hierarchy;

/* Fills h for `rank` (my_group, my_index); 0 and a failure in out when out of memory.
 * Release with hierarchy_free. */
PAPCOLL_HIDDEN
int hierarchy_of(int32_t ranks, int32_t rank, const papcoll_context *context, hierarchy *h,
                 papcoll_schedule *out);
PAPCOLL_HIDDEN
void hierarchy_free(hierarchy *h);
PAPCOLL_HIDDEN
int32_t hierarchy_group_size(const hierarchy *h, int32_t g);
/* The rank of member `index` of group g. */
PAPCOLL_HIDDEN
int32_t hierarchy_member(const hierarchy *h, int32_t g, int32_t index);

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
