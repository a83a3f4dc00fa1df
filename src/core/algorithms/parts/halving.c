/* halving.c - see halving.h. Blocks are indexed 0..exchange-1 over the near-equal split of
 * the vector. Rounds go by distance doubling (partner me ^ 1, then ^ 2, ^ 4, ...) and
 * vector halving: both partners work on the same contiguous range of blocks, the rank whose
 * bit is clear keeps the lower half, the other the upper half (Gavahi, Algorithm 1 and
 * MPICH's Rabenseifner). So exchange rank e ends with block bitreverse(e); the large early
 * rounds stay between neighbours (on an SMP node, in shared memory).
 *
 * Priority (Gavahi, Sect. III.C, our reading of Algorithm 2 and Figs. 4-6): block c held by rank
 * x moves at round k exactly when bit k of x ^ bitreverse(c) is set (each move fixes one bit
 * of the holder), lowest bit first. So among the blocks a rank holds, the one to reduce first
 * is the one whose list of remaining moves comes first, which is the largest
 * bitreverse(x ^ bitreverse(c)) = c ^ bitreverse(x). Sends are ordered by the receiver's
 * priority, reductions by this rank's. This is why Fig. 6's order changes direction from
 * round to round: the XOR with bitreverse(x) reverses the block order wherever x has a bit.
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

static int32_t bit_reverse(int32_t value, int32_t exchange) {
    int32_t reversed = 0;
    for (int32_t bit = 1; bit < exchange; bit <<= 1) {
        reversed <<= 1;
        if (value & bit) reversed |= 1;
    }
    return reversed;
}

int32_t halving_final_block(int32_t me, int32_t exchange) { return bit_reverse(me, exchange); }

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
    int32_t first_kept = (me & 1) ? half : 0;
    int64_t origin = sched_block_start(count, exchange, first_kept);
    int32_t scratch = SCHED_NONE;
    if (exchange > 1)
        scratch = sched_add_scratch(out, sched_block_start(count, exchange, first_kept + half) -
                                             origin);
    int32_t round = 0, last_reduce = start, low = 0, length = exchange;
    for (int32_t m = 1; m < exchange; m *= 2, round++) {
        const int32_t partner = me ^ m, peer = real_ranks[partner], n = length / 2;
        const int32_t kept = (me & m) ? low + n : low, sent = (me & m) ? low : low + n;
        state->rounds[round] = (halving_round){partner, kept, sent, n};
        low = kept;
        length = n;
        if (!priority) {
            /* one message each way, then one reduction of the kept half */
            int32_t sent_op = sched_send(out, peer, round,
                                         blocks_in(SCHED_RECV_BUFFER, count, exchange, sent,
                                                   sent + n, 0),
                                         SCHED_AFTER(last_reduce));
            int32_t got = sched_recv(out, peer, round,
                                     blocks_in(scratch, count, exchange, kept, kept + n, origin),
                                     SCHED_AFTER(last_reduce));
            last_reduce = sched_reduce(out,
                                       blocks_in(scratch, count, exchange, kept, kept + n, origin),
                                       blocks_in(SCHED_RECV_BUFFER, count, exchange, kept,
                                                 kept + n, 0),
                                       SCHED_SOURCE_LEFT, SCHED_AFTER(got, last_reduce));
            for (int32_t b = 0; b < n; b++) {
                state->block_read[sent + b] = sent_op;
                state->block_written[kept + b] = last_reduce;
            }
            continue;
        }
        /* per block: sends in the partner's priority order, as soon as each block is final
         * here; receives and reductions in this rank's priority order */
        for (int32_t b = 0; b < n; b++) order[b] = sent + b;
        by_priority(order, n, bit_reverse(partner, exchange));
        for (int32_t i = 0; i < n; i++) {
            int32_t b = order[i];
            state->block_read[b] = sched_send(
                out, peer, b, blocks_in(SCHED_RECV_BUFFER, count, exchange, b, b + 1, 0),
                SCHED_AFTER(state->block_written[b]));
        }
        for (int32_t b = 0; b < n; b++) order[b] = kept + b;
        by_priority(order, n, bit_reverse(me, exchange));
        for (int32_t i = 0; i < n; i++) {
            int32_t b = order[i];
            sched_region slot = blocks_in(scratch, count, exchange, b, b + 1, origin);
            int32_t got = sched_recv(out, peer, b, slot, SCHED_AFTER(slot_read[b]));
            int32_t reduced = sched_reduce(
                out, slot, blocks_in(SCHED_RECV_BUFFER, count, exchange, b, b + 1, 0),
                SCHED_SOURCE_LEFT, SCHED_AFTER(got, state->block_written[b]));
            state->block_written[b] = slot_read[b] = reduced;
        }
    }
    state->round_count = round;
    free(slot_read);
    free(order);
    return out->status == PAPCOLL_OK;
}

int reduce_scatter_build(int32_t ranks, int32_t rank, int64_t count, int priority,
                         papcoll_schedule *out) {
    if ((ranks & (ranks - 1)) != 0)
        return sched_fail(out, PAPCOLL_ERR_UNSUPPORTED, "a reduce-scatter by recursive halving "
                          "needs P to be a power of two, not %d", ranks);
    if (priority && ranks > SCHED_MAX_TAG + 1)
        return sched_fail(out, PAPCOLL_ERR_LIMIT, "priority_rs sends every block with a tag of "
                          "its own: at most %d ranks, not %d", SCHED_MAX_TAG + 1, ranks);
    int32_t *identity = malloc((size_t)ranks * sizeof *identity);
    if (identity == NULL) return sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory");
    for (int32_t r = 0; r < ranks; r++) identity[r] = r;
    int32_t start = sched_copy_own_vector(out);
    halving_state state;
    halving_reduce_scatter(out, ranks, rank, identity, count, start, priority, &state);
    halving_state_free(&state);
    free(identity);
    int32_t block = halving_final_block(rank, ranks);
    out->result_offset = sched_block_start(count, ranks, block);
    out->result_length = sched_block_length(count, ranks, block);
    return sched_finish(out);
}
