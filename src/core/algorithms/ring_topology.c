/* ring_topology.c - the ring all-reduce laid out as Patarasuk & Yuan 2009, Sect. 4's
 * contention-free logical ring on a tree of switches: the ranks in depth-first order of the tree
 * (papcoll_tree_ring_order, src/core/tree.c), so every link carries at most one ring message in
 * each direction per step and the ring runs at full link bandwidth. With no tree
 * (context->parameters.tree NULL) the ranks keep their order, which is contention-free on a
 * two-level SMP tree when consecutive ranks share a node (Patarasuk & Yuan 2009, Lemma 6).
 *
 * Worked example: hosts a0, a1 under switch L, b0, b1 under switch R, L and R under a root;
 * ranks 0, 1, 2, 3 on a0, b0, a1, b1. The order 0 1 2 3 would send every step's four
 * messages across the root (0->1, 1->2, 2->3, 3->0 all cross); the depth-first order is
 * 0 2 1 3 (a0 a1 b0 b1): 0->2 and 1->3 stay under L and R, 2->1 and 3->0 cross once each
 * way. Ring steps then proceed as in ring.c, in that order.
 */
#include <stdlib.h>

#include "ring.h"

static int ring_topology_build(int32_t ranks, int32_t rank, int64_t count, int32_t elem_size,
                               const papcoll_context *context, papcoll_schedule *out) {
    (void)elem_size;
    const papcoll_sim_topology *tree = context->parameters.tree;
    if (tree == NULL) return ring_build_with_order(ranks, rank, count, NULL, 0, out);
    if (tree->rank_count != ranks)
        return sched_fail(out, PAPCOLL_ERR_ARGUMENT, "the tree places %d ranks, not P = %d",
                          tree->rank_count, ranks);
    int32_t *order = malloc((size_t)ranks * sizeof *order);
    if (order == NULL) return sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory");
    char error[200];
    int status = papcoll_tree_ring_order(tree, order, error, sizeof error);
    if (status == PAPCOLL_OK) status = ring_build_with_order(ranks, rank, count, order, 0, out);
    else sched_fail(out, status, "%s", error);
    free(order);
    return status;
}

const algorithm_entry ring_topology_algorithm = {
    .info = {
        .name = "ring_topology",
        .description =
            "ring all-reduce in the contention-free order of a tree of switches (depth-first)",
        .source = "Patarasuk & Yuan 2009 Section 4 (contention-free logical ring, Lemmas 5-6)",
        .limitations = "commutative ops only (a ring); without a tree the rank order is used",
        .commutative_only = 1,
    },
    .build = ring_topology_build,
};
