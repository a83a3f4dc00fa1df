/* smp_binomial.c - SMP-binomial all-reduce (Patarasuk & Yuan 2009, Sect. 5, a baseline for
 * the contention-free ring): reduce inside each node to its leader, binomial reduce-then-
 * broadcast among the node leaders (papcoll's `binomial`), broadcast inside each node. It is
 * hr1 with the outer algorithm fixed to binomial; groups are the nodes (context->groups).
 *
 * Worked example, 2 nodes of 2 ranks, {0,1} and {2,3}:
 *   node reduce   1 -> 0, 3 -> 2;   leaders: 2 -> 0 (reduce), 0 -> 2 (broadcast);
 *   node bcast    0 -> 1, 2 -> 3.
 */
#include "parts/hierarchical.h"

static int smp_binomial_build(int32_t ranks, int32_t rank, int64_t count, int32_t elem_size,
                              const papcoll_context *context, papcoll_schedule *out) {
    return hierarchical_reduce_build(ranks, rank, count, elem_size, context, "binomial", out);
}

const algorithm_entry smp_binomial_algorithm = {
    .info = {
        .name = "smp_binomial",
        .description =
            "node reduce, binomial reduce + broadcast among node leaders, node broadcast",
        .source = "Patarasuk & Yuan 2009 Section 5 (SMP-binomial baseline)",
        .limitations = "needs the node of every rank (groups)",
        .commutative_only = 1,
        .needs_groups = 1,
    },
    .build = smp_binomial_build,
};
