/* hr1.c - hierarchical all-reduce HR1 (Proficz et al., Sect. 2: "reduce to a root in each group,
 * all-reduce among the roots, broadcast within each group"), for clusters whose groups
 * (sites, nodes) are joined by slow links: only one message per group pair crosses them.
 *
 * Groups come from context->groups (the topology, MPI_Comm_split_type, or a user's color);
 * unequal sizes are fine. Inside a group: binomial reduce to the leader (its lowest rank),
 * binomial broadcast back; across: context->parameters.outer_algorithm among the leaders (default
 * recursive_doubling, Proficz et al.'s butterfly).
 *
 * Worked example, P = 6, groups {0,1,2} and {3,4,5} (x_r: rank r's vector):
 *   reduce    1 -> 0 (x0+x1), 2 -> 0 (x0+x1+x2)     4 -> 3, 5 -> 3 (x3+x4+x5)
 *   outer     0 <-> 3: both hold x0..x5
 *   broadcast 0 -> 2, 0 -> 1                          3 -> 5, 3 -> 4
 * Operands are reordered (groups need not be contiguous), so ops must be commutative.
 */
#include "parts/hierarchical.h"

static int hr1_build(int32_t ranks, int32_t rank, int64_t count, int32_t elem_size,
                     const papcoll_context *context, papcoll_schedule *out) {
    const char *outer = context->parameters.outer_algorithm;
    if (outer == NULL) outer = "recursive_doubling";
    return hierarchical_reduce_build(ranks, rank, count, elem_size, context, outer, out);
}

const algorithm_entry hr1_algorithm = {
    .info = {
        .name = "hr1",
        .description =
            "hierarchical: reduce to each group's leader, all-reduce among leaders, broadcast "
            "back",
        .source = "Proficz et al. Section 2 (HR1) and Table 1",
        .limitations =
            "needs the group of every rank; the outer algorithm must be flat (not slt/prr, not "
            "hierarchical); scratch: count elements on ranks that receive in the reduce",
        .commutative_only = 1,
        .needs_groups = 1,
    },
    .build = hr1_build,
};
