/* halving.c - see halving.h. Blocks are indexed 0..exchange-1 over the near-equal split of
 * the vector; at the round with distance m, exchange rank e works on the 2m blocks that
 * agree with e above bit m, keeps the m that agree with e on bit m and sends the other m.
 *
 * Priority (seed 002 S3.C, our reading of Algorithm 2 and Figs. 4-6): a block b held by
 * rank x leaves x at the rounds of the set bits of b ^ x, highest first (each move fixes one
 * bit). So among the blocks a rank holds, the one to reduce first is the one whose list of
 * remaining moves comes first lexicographically, which is the largest b ^ x. Sends are ordered
 * by the receiver's priority (largest b ^ partner first), reductions by this rank's. This is
 * why Fig. 6's order changes direction from round to round: b ^ x reverses the block order
 * wherever x has a bit set.
 */
#include "halving.h"

#include <stdlib.h>
#include <string.h>

void halving_state_free(halving_state *state) {
    free(state->block_written);
    free(state->block_read);
    state->block_written = state->block_read = NULL;
}

static sched_region blocks_in(int32_t buffer, int64_t count, int32_t exchange, int32_t first,
                              int32_t end, int64_t origin) {
    int64_t from = sched_block_start(count, exchange, first);
    return sched_region_of(buffer, from - origin, sched_block_start(count, exchange, end) - from);
}

/* Sorts blocks[0 .. n) by key ^ block, largest first (insertion sort: n <= exchange / 2). */
static void by_priority(int32_t *blocks, int32_t n, int32_t key) {
    for (int32_t i = 1; i < n; i++)
        for (int32_t j = i; j > 0 && (blocks[j] ^ key) > (blocks[j - 1] ^ key); j--) {
            int32_t swap = blocks[j];
            blocks[j] = blocks[j - 1];
            blocks[j - 1] = swap;
        }
}

int halving_reduce_scatter(papcoll_schedule *out, int32_t exchange, int32_t me,
                           const int32_t *real_ranks, int64_t count, int32_t start,
                           int priority, halving_state *state) {
    state->block_written = malloc((size_t)exchange * sizeof(int32_t));
    state->block_read = malloc((size_t)exchange * sizeof(int32_t));
    int32_t *slot_read = malloc((size_t)exchange * sizeof(int32_t));
    int32_t *order = malloc((size_t)exchange * sizeof(int32_t));
    if (!state->block_written || !state->block_read || !slot_read || !order) {
        free(slot_read);
        free(order);
        sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory");
        return 0;
    }
    for (int32_t b = 0; b < exchange; b++) {
        state->block_written[b] = start;
        state->block_read[b] = slot_read[b] = SCHED_NONE;
    }
    /* scratch: the half kept in the first round, which holds every later kept block */
    int32_t half = exchange / 2;
    int32_t first_kept = (me & half) ? half : 0;
    int64_t origin = sched_block_start(count, exchange, first_kept);
    int32_t scratch = SCHED_NONE;
    if (exchange > 1)
        scratch = sched_add_scratch(out, sched_block_start(count, exchange, first_kept + half) -
                                             origin);
    int32_t round_tag = 0, last_reduce = start;
    for (int32_t m = half; m >= 1; m /= 2, round_tag++) {
        const int32_t partner = me ^ m, peer = real_ranks[partner];
        const int32_t base = me & ~(2 * m - 1);                 /* the 2m blocks worked on */
        const int32_t kept = base + (me & m), sent = base + (partner & m);
        if (!priority) {
            /* one message each way, then one reduction of the kept half */
            int32_t sent_op = sched_send(out, peer, round_tag,
                                         blocks_in(SCHED_RECV_BUFFER, count, exchange, sent,
                                                   sent + m, 0),
                                         SCHED_AFTER(last_reduce));
            int32_t got = sched_recv(out, peer, round_tag,
                                     blocks_in(scratch, count, exchange, kept, kept + m, origin),
                                     SCHED_AFTER(last_reduce));
            last_reduce = sched_reduce(out,
                                       blocks_in(scratch, count, exchange, kept, kept + m, origin),
                                       blocks_in(SCHED_RECV_BUFFER, count, exchange, kept,
                                                 kept + m, 0),
                                       SCHED_SOURCE_LEFT, SCHED_AFTER(got, last_reduce));
            for (int32_t b = 0; b < m; b++) {
                state->block_read[sent + b] = sent_op;
                state->block_written[kept + b] = last_reduce;
            }
            continue;
        }
        /* per block: sends in the partner's priority order, as soon as each block is final
         * here; receives and reductions in this rank's priority order */
        for (int32_t b = 0; b < m; b++) order[b] = sent + b;
        by_priority(order, m, partner);
        for (int32_t i = 0; i < m; i++) {
            int32_t b = order[i];
            state->block_read[b] = sched_send(
                out, peer, b, blocks_in(SCHED_RECV_BUFFER, count, exchange, b, b + 1, 0),
                SCHED_AFTER(state->block_written[b]));
        }
        for (int32_t b = 0; b < m; b++) order[b] = kept + b;
        by_priority(order, m, me);
        for (int32_t i = 0; i < m; i++) {
            int32_t b = order[i];
            sched_region slot = blocks_in(scratch, count, exchange, b, b + 1, origin);
            int32_t got = sched_recv(out, peer, b, slot, SCHED_AFTER(slot_read[b]));
            int32_t reduced = sched_reduce(
                out, slot, blocks_in(SCHED_RECV_BUFFER, count, exchange, b, b + 1, 0),
                SCHED_SOURCE_LEFT, SCHED_AFTER(got, state->block_written[b]));
            state->block_written[b] = slot_read[b] = reduced;
        }
    }
    free(slot_read);
    free(order);
    return out->status == PAPCOLL_OK;
}
