/* linear_tree.h - the segmented linear tree (Proficz 2018, Table 1, in the form of Fig. 5) laid
 * out along a given chain of ranks; linear_tree uses 0, 1, ..., P-1 and slt (Proficz 2018,
 * Sect. 4.1) the ranks sorted by predicted arrival. */
#ifndef PAPCOLL_ALGORITHMS_LINEAR_TREE_H
#define PAPCOLL_ALGORITHMS_LINEAR_TREE_H

#include <stdint.h>

#include "../schedule.h"

/* Builds rank `rank`'s linear-tree all-reduce along the chain order[0] -> order[1] -> ...
 * -> order[ranks-1] (order NULL: 0, 1, ..., ranks-1; otherwise a permutation of the ranks).
 * segments: pieces the vector is cut into (0 = ranks). The result combines contributions
 * in chain order, x_order[0] op x_order[1] op ..., so with the identity order it is in rank
 * order and valid for non-commutative ops. Returns the schedule's status. */
PAPCOLL_HIDDEN
int linear_tree_build_with_order(int32_t ranks, int32_t rank, int64_t count,
                                 const int32_t *order, int32_t segments, papcoll_schedule *out);

#endif /* PAPCOLL_ALGORITHMS_LINEAR_TREE_H */
