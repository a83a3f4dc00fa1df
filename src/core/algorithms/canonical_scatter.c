/* canonical_scatter.c - the bandwidth-optimal all-reduce of reproducible mode
 * (docs/reproducible.md): a reduce-scatter in which the owner of each block folds the P
 * contributions in the canonical order ((x0 op x1) op x2) ... op x(P-1), then the ring
 * all-gather (parts/ring_phases, Patarasuk & Yuan 2009, Sect. 4.1). Every rank sends and
 * receives the bytes of a ring all-reduce, 2 (P-1)/P x count elements (Patarasuk & Yuan 2009,
 * Lemma 4's lower bound), and every element's value is the same bits whatever the arrival
 * order or the segmentation, since one rank forms it in one fixed order.
 *
 * Worked example, P = 3, the vector cut into blocks B0 B1 B2 (x_r[b]: rank r's block b;
 * "->" a message; the fold runs at the block's owner, in rank order, as contributions land):
 *
 *   scatter (one round, every rank to every owner)
 *     0 -x0[1]-> 1   0 -x0[2]-> 2
 *     1 -x1[0]-> 0   1 -x1[2]-> 2
 *     2 -x2[0]-> 0   2 -x2[1]-> 1
 *   fold at each owner
 *     0: B0 = (x0[0] op x1[0]) op x2[0]
 *     1: B1 = (x0[1] op x1[1]) op x2[1]
 *     2: B2 = (x0[2] op x1[2]) op x2[2]
 *   ring all-gather (P - 1 steps)
 *     step 0   0 -B0-> 1   1 -B1-> 2   2 -B2-> 0
 *     step 1   0 -B2-> 1   1 -B0-> 2   2 -B1-> 0
 *
 * Against the ring's reduce-scatter: the same bytes, but one round of P - 1 messages a rank
 * instead of P - 1 rounds of one, and the owner reduces P - 1 blocks where each ring step
 * reduces one. The ring cannot keep the order: its partial of block b starts at rank b + 1
 * and travels round, so block b is folded from rank b + 1 on, a different grouping per
 * block.
 *
 * Choices. The schedule copies send -> recv first and sends from recv (safe with
 * MPI_IN_PLACE); the all-gather's receive into block b waits for the scatter's send of it.
 * The fold is parts/canonical_fold: incoming blocks land in P - 1 scratch slots of the owner's
 * block (slot q: rank q's), so contributions arrive in any order, a late rank's last, while
 * the owner folds the ones before it as soon as they are there: the fold waits only where
 * the order makes it (x_q is needed before x_(q+1) can be added).
 * Scatter messages carry tag TAG_WINDOW_MAX, above the all-gather's window tags: one message
 * per ordered pair of ranks, so none can be matched out of order.
 */
#include "../schedule.h"
#include "parts/canonical_fold.h"
#include "parts/ring_phases.h"
#include "parts/tag_window.h"

enum { SCATTER_TAG = TAG_WINDOW_MAX };

static int canonical_scatter_build(int32_t ranks, int32_t rank, int64_t count,
                                   int32_t elem_size, const papcoll_context *context,
                                   papcoll_schedule *out) {
    (void)elem_size;
    (void)context;
    int32_t copied = sched_copy_own_vector(out);
    if (ranks == 1) return sched_finish(out);
    ring_phases ring;
    if (!ring_phases_open(&ring, NULL, ranks, rank, count, 0, copied, out))
        return sched_finish(out);
    /* every other owner gets this rank's block of theirs */
    for (int32_t owner = 0; owner < ranks; owner++) {
        if (owner == rank) continue;
        sched_region block = SCHED_RECV_REGION(sched_block_start(count, ranks, owner),
                                               sched_block_length(count, ranks, owner));
        int32_t sent = sched_send(out, owner, SCATTER_TAG, block, SCHED_AFTER(copied));
        ring_phases_block_read_by(&ring, owner, sent);
    }
    /* and folds everyone's contribution to its own block (no send reads that block) */
    sched_region own = SCHED_RECV_REGION(sched_block_start(count, ranks, rank),
                                         sched_block_length(count, ranks, rank));
    int32_t step = canonical_fold(out, ranks, rank, own, copied, SCHED_FIRST, SCATTER_TAG);
    if (step == SCHED_NONE) {
        ring_phases_close(&ring);
        return sched_finish(out);
    }
    ring_phases_block_final(&ring, step);
    ring_all_gather(&ring, out);
    ring_phases_close(&ring);
    return sched_finish(out);
}

const algorithm_entry canonical_scatter_algorithm = {
    .info = {
        .name = "canonical_scatter",
        .description = "reduce-scatter whose block owners fold the contributions in rank "
                       "order, then ring all-gather; reproducible, bandwidth optimal",
        .source = "papcoll's reproducible mode; ring all-gather of Patarasuk & Yuan 2009 "
                  "S4.1; the bytes of its Lemma 4 bound",
        .limitations = "none; scratch (P - 1) x ceil(count/P) elements; P - 1 messages "
                       "a rank in its first round",
        .canonical_order = 1,
    },
    .build = canonical_scatter_build,
};
