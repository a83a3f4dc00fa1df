/* canonical_fold.h - reproducible mode's one reduction (docs/reproducible.md): a
 * region's P contributions gathered at one rank and folded there in the canonical order
 * ((x0 op x1) op x2) ... op x(P-1). canonical_scatter folds each block at its owner,
 * canonical_gather the whole vector at every rank. */
#ifndef PAPCOLL_ALGORITHMS_PARTS_CANONICAL_FOLD_H
#define PAPCOLL_ALGORITHMS_PARTS_CANONICAL_FOLD_H

#include <stdint.h>

#include "../../hidden.h"
#include "../../schedule.h"

/* `folded`, a region of the receive buffer, holds this rank's own contribution once op
 * `ready` is done. Receives every other rank's contribution to it (one message from each,
 * tag `tag`) into P - 1 scratch slots, so they may arrive in any order, and folds them into
 * `folded` in rank order, each step as soon as its operand is there. Before `folded` is
 * first overwritten (with rank 0's contribution) the ops in read_by[0 .. read_by_count) must be
 * done: the sends that read it. Returns the op after which `folded` holds the fold, or
 * SCHED_NONE (a failure in out). An empty region still receives its empty messages. */
PAPCOLL_HIDDEN
int32_t canonical_fold(papcoll_schedule *out, int32_t ranks, int32_t rank, sched_region folded,
                       int32_t ready, const int32_t *read_by, int32_t read_by_count, int32_t tag);

#endif /* PAPCOLL_ALGORITHMS_PARTS_CANONICAL_FOLD_H */
