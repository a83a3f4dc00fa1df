/* canonical_straggler.c - the PAP-aware all-reduce of reproducible mode
 * (docs/reproducible.md): the on-time ranks (the core) own the blocks and fold each one in
 * the canonical order ((x0 op x1) op x2) ... op x(P-1) as the contributions land; a late
 * rank owns nothing, so when it arrives it only hands its blocks over and takes the finals
 * back: about one vector out and one in, the straggler algorithm's budget (straggler.c),
 * with every element formed in one fixed order whatever the arrivals.
 *
 * Who is late: straggler's rule (parts/arrival_order.h: late_rank_count over the predicted
 * arrivals and tau). The Q = P - m core ranks, in rank order, own Q near-equal blocks. With
 * nobody late (m = 0) every rank owns a block: the same messages as canonical_scatter, with
 * the finals sent straight to every rank instead of around a ring.
 *
 * Worked example, P = 4, rank 1 late (core 0 2 3 own blocks B0 B1 B2; x_r[b]: rank r's
 * block b; the fold of block b runs at its owner):
 *   during the delay   0 -x0[1]-> 2   0 -x0[2]-> 3   2 -x2[0]-> 0   2 -x2[2]-> 3
 *                      3 -x3[0]-> 0   3 -x3[1]-> 2
 *                      owner of B0 (rank 0) holds x0, x2, x3 of it: folds nothing past x0
 *                      yet (x1 comes next in the order), and keeps x2, x3 in their slots
 *   rank 1 arrives     1 -x1[0]-> 0   1 -x1[1]-> 2   1 -x1[2]-> 3
 *                      each owner: ((x0 op x1) op x2) op x3 for its block
 *   finals             0 -B0-> 1, 2, 3   2 -B1-> 0, 1, 3   3 -B2-> 0, 1, 2
 * Had rank 3 (the last in the order) been late, the owners would have folded x0..x2 during
 * the delay and needed one reduction each after it.
 *
 * Choices. The schedule copies send -> recv and sends from recv (safe with MPI_IN_PLACE); a
 * final received into a block waits for this rank's send of that block. The owner's fold is
 * parts/canonical_fold (one slot per other rank, any order of arrival). An owner sends its
 * final to the ranks after it first (rank + 1, rank + 2, ...), so that the owners' first
 * messages go to different ranks. Tags: contributions 0, finals 1 (one message of each per
 * ordered pair of ranks). Wrong predictions change who waits, never the result.
 */
#include <math.h>
#include <stdlib.h>

#include "../schedule.h"
#include "parts/arrival_order.h"
#include "parts/canonical_fold.h"

enum { CONTRIBUTION_TAG = 0, FINAL_TAG = 1 };

/* owner_of[b] for the Q blocks: the core ranks in rank order. Returns Q, or 0 on failure. */
static int32_t core_owners(int32_t ranks, const papcoll_context *context, int32_t *owner_of,
                           papcoll_schedule *out) {
    if (!(isfinite(context->tau) && context->tau > 0)) {
        sched_fail(out, PAPCOLL_ERR_ARGUMENT, "canonical_straggler needs tau > 0 (got %g)",
                   context->tau);
        return 0;
    }
    int32_t *order = malloc((size_t)ranks * sizeof *order);
    double *sorted = malloc((size_t)ranks * sizeof *sorted);
    uint8_t *late = calloc((size_t)ranks, 1);
    int32_t owners = 0;
    if (order == NULL || sorted == NULL || late == NULL) {
        sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory laying out canonical_straggler");
    } else if (arrival_order(context, ranks, "canonical_straggler", order, sorted, out)) {
        int32_t late_count = late_rank_count(sorted, ranks, context->tau);
        for (int32_t t = ranks - late_count; t < ranks; t++) late[order[t]] = 1;
        for (int32_t r = 0; r < ranks; r++)
            if (!late[r]) owner_of[owners++] = r;
    }
    free(order);
    free(sorted);
    free(late);
    return owners;
}

static int canonical_straggler_build(int32_t ranks, int32_t rank, int64_t count,
                                     int32_t elem_size, const papcoll_context *context,
                                     papcoll_schedule *out) {
    (void)elem_size;
    int32_t *owner_of = malloc((size_t)ranks * sizeof *owner_of);
    int32_t *sent = malloc((size_t)ranks * sizeof *sent);
    if (owner_of == NULL || sent == NULL) {
        free(owner_of);
        free(sent);
        return sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory");
    }
    int32_t blocks = core_owners(ranks, context, owner_of, out);
    int32_t copied = sched_copy_own_vector(out);
    int32_t mine = -1; /* the block this rank owns */
    for (int32_t b = 0; b < blocks; b++)
        if (owner_of[b] == rank) mine = b;
    for (int32_t b = 0; b < blocks && ranks > 1; b++) { /* every owner gets its block */
        sent[b] = copied;
        if (b != mine)
            sent[b] = sched_send(out, owner_of[b], CONTRIBUTION_TAG,
                                 SCHED_RECV_REGION(sched_block_start(count, blocks, b),
                                                   sched_block_length(count, blocks, b)),
                                 SCHED_AFTER(copied));
    }
    if (mine >= 0 && ranks > 1) { /* fold it, then the final to every other rank */
        sched_region own = SCHED_RECV_REGION(sched_block_start(count, blocks, mine),
                                             sched_block_length(count, blocks, mine));
        int32_t final = canonical_fold(out, ranks, rank, own, copied, SCHED_FIRST,
                                       CONTRIBUTION_TAG);
        for (int32_t k = 1; k < ranks && final != SCHED_NONE; k++)
            sched_send(out, (rank + k) % ranks, FINAL_TAG, own, SCHED_AFTER(final));
    }
    for (int32_t b = 0; b < blocks && ranks > 1; b++) /* the other owners' finals */
        if (b != mine)
            sched_recv(out, owner_of[b], FINAL_TAG,
                       SCHED_RECV_REGION(sched_block_start(count, blocks, b),
                                         sched_block_length(count, blocks, b)),
                       SCHED_AFTER(sent[b]));
    free(owner_of);
    free(sent);
    return sched_finish(out);
}

const algorithm_entry canonical_straggler_algorithm = {
    .info = {
        .name = "canonical_straggler",
        .description = "the on-time ranks own the blocks and fold them in rank order as "
                       "contributions land; a late rank hands its blocks over and takes the "
                       "finals back; reproducible, PAP-aware",
        .source = "papcoll's reproducible mode; straggler's late ranks (Proficz 2018 "
                  "S3's bound, StragglAR's idea)",
        .limitations = "needs arrivals and tau > 0; scratch (P - 1) x ceil(count/Q) "
                       "elements on a core rank (Q on-time ranks); every rank sends and "
                       "receives about one vector",
        .canonical_order = 1,
        .needs_arrivals = 1,
    },
    .build = canonical_straggler_build,
};
