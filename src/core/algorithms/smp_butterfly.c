/* smp_butterfly.c - SMP-butterfly all-reduce (Patarasuk & Yuan 2009, Sect. 5, a baseline for
 * the contention-free ring): reduce inside each node to its leader, butterfly (recursive
 * doubling, with MPICH's fold for leader counts that are not powers of two) among the node
 * leaders, broadcast inside each node. It is hr1 with the outer algorithm fixed to
 * recursive_doubling; groups are the nodes (context->groups).
 *
 * Worked example, 4 nodes of 2, {0,1} {2,3} {4,5} {6,7}:
 *   node reduce   1 -> 0, 3 -> 2, 5 -> 4, 7 -> 6
 *   butterfly     0 <-> 2, 4 <-> 6; then 0 <-> 4, 2 <-> 6
 *   node bcast    0 -> 1, 2 -> 3, 4 -> 5, 6 -> 7
 */
#include "parts/hierarchical.h"

static int smp_butterfly_build(int32_t ranks, int32_t rank, int64_t count, int32_t elem_size,
                               const papcoll_context *context, papcoll_schedule *out) {
    return hierarchical_reduce_build(ranks, rank, count, elem_size, context,
                                     "recursive_doubling", out);
}

const algorithm_entry smp_butterfly_algorithm = {
    .info = {
        .name = "smp_butterfly",
        .description =
            "node reduce, butterfly (recursive doubling) among node leaders, node broadcast",
        .source = "Patarasuk & Yuan 2009 Section 5 (SMP-butterfly baseline)",
        .limitations = "needs the node of every rank (groups)",
        .commutative_only = 1,
        .needs_groups = 1,
    },
    .build = smp_butterfly_build,
};
