/* slt.c - sorted linear tree, SLT (Proficz 2018, Sect. 4.1, Fig. 5 and Fig. 6b): the segmented
 * linear tree (linear_tree.c) laid along the ranks sorted by predicted arrival, earliest first
 * (ties by rank), so the latest process is last in the pipeline and the early ones start the
 * reduce loop while it still computes.
 *
 * Worked example, P = 3, rank 0 predicted late: arrivals (0.004, 0, 0) s gives the chain
 * 1 -> 2 -> 0; segments d0 d1 d2 ("+" reduced, "=" kept; one row per tau):
 *
 *   t1  1 -d0-> 2+                          (rank 0 still computing)
 *   t2  1 -d1-> 2+  2 -d0-> 0+
 *   t3  1 -d2-> 2+  2 -d1-> 0+  0 -d0-> 1=  (0 finished d0, sends it to the front)
 *   t4              2 -d2-> 0+  0 -d1-> 1=  1 -d0-> 2=
 *   t5                          0 -d2-> 1=  1 -d1-> 2=
 *   t6                                      1 -d2-> 2=
 *
 * Unsorted (chain 0 -> 1 -> 2) nothing could move until rank 0 arrives.
 *
 * Choices. The same as linear_tree (Fig. 5 line 6 fixed so position 0 sends its own
 * segments; segment count = context segment_count, 0 = P). The arrival estimates come from
 * the context and must be identical on every rank (the MPI layer makes sure); wrong
 * estimates only slow the pipeline, never change the result. The result combines the
 * contributions in arrival order, so the op must be commutative. tau is not used.
 */
#include <stdlib.h>

#include "parts/arrival_order.h"
#include "linear_tree.h"

static int slt_build(int32_t ranks, int32_t rank, int64_t count, int32_t elem_size,
                     const papcoll_context *context, papcoll_schedule *out) {
    (void)elem_size;
    int32_t *order = malloc((size_t)ranks * sizeof *order);
    if (order == NULL) return sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory in slt");
    if (arrival_order(context, ranks, "slt", order, NULL, out))
        linear_tree_build_with_order(ranks, rank, count, order,
                                     context->parameters.segment_count, out);
    free(order);
    return sched_finish(out);
}

const algorithm_entry slt_algorithm = {
    .info = {
        .name = "slt",
        .description =
            "sorted linear tree: the linear-tree pipeline along the ranks sorted by predicted "
            "arrival",
        .source = "Proficz 2018 S4.1, Fig. 5 and Fig. 6b",
        .limitations =
            "commutative ops only (contributions combine in arrival order); needs one arrival "
            "estimate per rank, identical on all ranks; segment_count (0 = P); latency grows "
            "with P",
        .commutative_only = 1,
        .needs_arrivals = 1,
    },
    .build = slt_build,
};
