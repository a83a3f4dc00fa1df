/* hr2.c - hierarchical all-reduce HR2 (Proficz et al., Sect. 2: "all-reduce within each group,
 * then all-reduce across the groups without a single root: each process with its
 * counterparts"): every rank works in both phases, so the slow links carry one message per
 * column instead of one per group, in parallel.
 *
 * Inside: the parameters' inner_algorithm (default ring); across: their outer_algorithm
 * (default recursive_doubling) among the ranks with the same index in their groups.
 * Unequal groups (choice: Proficz et al. used equal ones): with m the smallest group's size,
 * indices 0..m-1 form the columns; a member with index j >= m receives the result from
 * member j mod m of its own group afterwards.
 *
 * Worked example, P = 5, groups {0,1,2} and {3,4} (m = 2):
 *   inner     0,1,2 all-reduce (x0+x1+x2)      3,4 all-reduce (x3+x4)
 *   columns   0 <-> 3, 1 <-> 4: both pairs hold x0..x4
 *   spread    0 -> 2 (index 2 mod 2 = 0)
 * Operands are reordered, so ops must be commutative.
 */
#include "parts/hierarchical.h"

static int hr2_build(int32_t ranks, int32_t rank, int64_t count, int32_t elem_size,
                     const papcoll_context *context, papcoll_schedule *out) {
    const papcoll_parameters *parameters = &context->parameters;
    const char *inner = parameters->inner_algorithm ? parameters->inner_algorithm : "ring";
    const char *outer = parameters->outer_algorithm ? parameters->outer_algorithm
                                                    : "recursive_doubling";
    return hierarchical_allreduce_build(ranks, rank, count, elem_size, context, inner, outer,
                                        out);
}

const algorithm_entry hr2_algorithm = {
    .info = {
        .name = "hr2",
        .description =
            "hierarchical: all-reduce inside each group, then across groups index by index",
        .source = "Proficz et al. Section 2 (HR2) and Table 1",
        .limitations =
            "needs the group of every rank; inner and outer algorithms must be flat; unequal "
            "groups: indices beyond the smallest group's size get the result from a group mate",
        .commutative_only = 1,
        .needs_groups = 1,
    },
    .build = hr2_build,
};
