/* priority_rs.c - priority-aware reduce-scatter (Gavahi, Sect. III.C, Algorithm 2 and
 * Figs. 4-6): the pairs and rounds of rs_halving, but every block travels as its own
 * non-blocking message and is reduced as soon as it arrives, the blocks that leave again
 * soonest first, so a partner waiting for a block waits only for that block's reduction
 * and the reductions of the rest overlap the communication. More messages: a loss for small
 * vectors (latency), a gain for large ones (Gavahi, Tables 1-2).
 *
 * Priority (halving.c): block c held by rank x moves at the rounds of the set bits of
 * x ^ bitreverse(c), lowest first, so the largest c ^ bitreverse(x) goes first. Worked
 * example, P = 4, rank 1 (bitreverse(1) = 2; blocks B0..B3):
 *   round 1 (partner 0)  sends B1 then B0 (partner 0's order: B1 ^ 0 = 1 > B0 ^ 0 = 0);
 *                        receives and reduces B3 then B2 (B3 ^ 2 = 1 >
 *                        B2 ^ 2 = 0: B3 leaves again in round 2, B2 stays)
 *   round 2 (partner 3)  sends B3 as soon as its reduction is done, while B2's runs;
 *                        receives and reduces B2, rank 1's final block.
 * Scratch: count / 2 elements, the same as rs_halving (no extra memory, as the paper
 * claims). P must be a power of two.
 */
#include "parts/halving.h"

static int priority_rs_build(int32_t ranks, int32_t rank, int64_t count, int32_t elem_size,
                             const papcoll_context *context, papcoll_schedule *out) {
    (void)elem_size;
    (void)context;
    return reduce_scatter_build(ranks, rank, count, 1, out);
}

const algorithm_entry priority_rs_algorithm = {
    .info = {
        .name = "priority_rs",
        .description =
            "priority-aware reduce-scatter: per-block messages, the blocks needed soonest "
            "reduced first",
        .source = "Gavahi Section III.C, Algorithm 2, Figs. 4-6",
        .limitations =
            "a reduce-scatter (rank r keeps block bitreverse(r)), not an all-reduce; P must be "
            "a power of two; scratch: count / 2 (as rs_halving); P - 1 messages instead of log2"
            " P",
        .commutative_only = 1,
        .reduce_scatter = 1,
    },
    .build = priority_rs_build,
};
