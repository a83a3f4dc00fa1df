/* priority_rabenseifner.c - all-reduce = priority-aware reduce-scatter (priority_rs, Gavahi,
 * Algorithm 2) + all-gather by recursive vector doubling (Gavahi, Sect. II.B), with
 * MPICH's fold of the surplus ranks when P is not a power of two (Ruefenacht et al. 2017,
 * Fig. 2): the priority version of a Rabenseifner all-reduce.
 *
 * Worked example, P = 4 (blocks B0..B3, as priority_rs): after the reduce-scatter ranks
 * 0, 1, 2, 3 hold blocks B0, B2, B1, B3 of the sum; the all-gather replays the rounds
 * backwards:
 *   round 3 (distance 2)   0 <-> 2 swap B0, B1;  1 <-> 3 swap B2, B3
 *   round 4 (distance 1)   0 <-> 1 swap B0 B1 and B2 B3;  2 <-> 3 likewise: all hold the sum.
 * P = 6: ranks 0 and 2 first send their vectors to 1 and 3, which reduce them in and take
 * part as exchange ranks 0 and 1 (4 and 5 are 2 and 3); 1 and 3 send the result back last.
 * Scratch: count / 2 elements, or count on a rank that takes in a folded vector.
 * Operands are reordered (commutative ops only).
 */
#include <stdlib.h>

#include "parts/fold.h"
#include "parts/halving.h"


static int priority_rabenseifner_build(int32_t ranks, int32_t rank, int64_t count,
                                       int32_t elem_size, const papcoll_context *context,
                                       papcoll_schedule *out) {
    (void)elem_size;
    (void)context;
    const fold_plan fold = fold_plan_of(ranks, rank);
    const int32_t exchange = fold.exchange;
    if (exchange > 16384)
        return sched_fail(out, PAPCOLL_ERR_LIMIT, "at most 16384 exchanging ranks (one tag "
                          "per block)");
    /* tags: blocks use 0 .. exchange - 1, the fold and the all-gather the two above, so the
     * algorithm also fits in a phase of a hierarchy (compose.c) */
    const int32_t FOLD_TAG = exchange, GATHER_TAG = exchange + 1;
    const sched_region all = SCHED_RECV_REGION(0, count);
    if (fold.hands_over) return fold_hand_over(out, rank, count, FOLD_TAG);
    int32_t start = sched_copy(out, SCHED_SEND_REGION(0, count), all, SCHED_FIRST);
    if (fold.takes_in) { /* takes in rank - 1's vector */
        int32_t folded = sched_add_scratch(out, count);
        start = fold_take_in(out, rank, FOLD_TAG, sched_region_of(folded, 0, count), all,
                             SCHED_NONE, start);
    }
    int32_t *real = malloc((size_t)exchange * sizeof *real);
    int32_t *after = malloc(((size_t)exchange + 1) * sizeof *after);
    if (real == NULL || after == NULL) {
        free(real);
        free(after);
        return sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory");
    }
    for (int32_t e = 0; e < exchange; e++) real[e] = sched_fold_real_rank(e, fold.surplus);
    const int32_t me = fold.me;
    halving_state state;
    if (halving_reduce_scatter(out, exchange, me, real, count, start, 1, &state)) {
        /* all-gather: the reduce-scatter's rounds backwards, each pair swapping the halves
         * it split, so the blocks held double each round */
        int32_t last = state.block_written[halving_final_block(me, exchange)];
        for (int32_t k = state.round_count - 1; k >= 0; k--) {
            const halving_round *round = &state.rounds[k];
            const int32_t peer = real[round->partner];
            int32_t low = round->kept, high = round->kept + round->length;
            /* what this rank holds now is the whole kept half of round k: later rounds split
             * it and the all-gather has already swapped those halves back */
            sched_region held = sched_region_of(SCHED_RECV_BUFFER,
                                                sched_block_start(count, exchange, low),
                                                sched_block_start(count, exchange, high) -
                                                    sched_block_start(count, exchange, low));
            int32_t sent = sched_send(out, peer, GATHER_TAG, held, SCHED_AFTER(last));
            /* the partner's half lands where this rank's stale copies were sent from */
            int32_t waits = 0;
            after[waits++] = last;
            for (int32_t b = round->sent; b < round->sent + round->length; b++)
                if (state.block_read[b] != SCHED_NONE &&
                    (waits == 1 || after[waits - 1] != state.block_read[b]))
                    after[waits++] = state.block_read[b];
            const int64_t from = sched_block_start(count, exchange, round->sent);
            const int64_t to = sched_block_start(count, exchange, round->sent + round->length);
            int32_t got = sched_recv(out, peer, GATHER_TAG,
                                     sched_region_of(SCHED_RECV_BUFFER, from, to - from), after,
                                     waits);
            /* both must be done before the next round's send of the doubled range */
            int32_t pair[2] = {sent, got};
            last = sched_copy(out, SCHED_RECV_REGION(0, 0), SCHED_RECV_REGION(0, 0), pair, 2);
        }
        if (fold.takes_in) sched_send(out, rank - 1, FOLD_TAG, all, SCHED_AFTER(last));
    }
    halving_state_free(&state);
    free(real);
    free(after);
    return sched_finish(out);
}

const algorithm_entry priority_rabenseifner_algorithm = {
    .info = {
        .name = "priority_rabenseifner",
        .description =
            "Rabenseifner's all-reduce with the priority-aware reduce-scatter (per-block "
            "messages)",
        .source =
            "Gavahi Algorithm 2 + Section II.B all-gather; MPICH fold (Ruefenacht et al. "
            "2017 Fig. 2)",
        .limitations =
            "commutative ops only; exchange ranks <= 16384; scratch: count / 2, or count on "
            "ranks that take in a folded vector",
        .commutative_only = 1,
    },
    .build = priority_rabenseifner_build,
};
