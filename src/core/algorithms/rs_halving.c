/* rs_halving.c - reduce-scatter by recursive vector halving and distance doubling (seed 002
 * Section III.C, Algorithm 1, the "naive" version; MPICH's first half of Rabenseifner): each
 * round a rank swaps half of the blocks it works on with the partner at distance 1, 2, 4, ...
 * in one message, and reduces the half it keeps in one reduction once it has arrived. The
 * baseline of priority_rs. The result: rank r holds block bitreverse(r) of P near-equal
 * blocks, reduced over all ranks (choice: as the paper's and MPICH's distance doubling leave
 * it, not MPI_Reduce_scatter_block's block r; the verifier checks that block).
 *
 * Worked example, P = 4, blocks B0..B3 (x_r: rank r's vector):
 *   round 1 (distance 1)   0 <-> 1: 0 keeps B0 B1, 1 keeps B2 B3; 2 <-> 3 likewise
 *   round 2 (distance 2)   0 <-> 2: 0 keeps B0, 2 keeps B1; 1 <-> 3: 1 keeps B2, 3 keeps B3
 * Rank r then holds block bitreverse(r) (0: B0, 1: B2, 2: B1, 3: B3) of x0 + ... + x3.
 * Scratch: count / 2 elements (the first round's kept half). P must be a power of two.
 */
#include <stdlib.h>

#include "halving.h"

/* Shared with priority_rs.c: the reduce-scatter of rank `rank` among `ranks` (a power of
 * two), result block bitreverse(rank). */
int reduce_scatter_build(int32_t ranks, int32_t rank, int64_t count, int priority,
                         papcoll_schedule *out);

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
    int32_t start = sched_copy(out, SCHED_SEND_REGION(0, count), SCHED_RECV_REGION(0, count),
                               SCHED_FIRST);
    halving_state state;
    halving_reduce_scatter(out, ranks, rank, identity, count, start, priority, &state);
    halving_state_free(&state);
    free(identity);
    int32_t block = halving_final_block(rank, ranks);
    out->result_offset = sched_block_start(count, ranks, block);
    out->result_length = sched_block_length(count, ranks, block);
    return sched_finish(out);
}

static int rs_halving_build(int32_t ranks, int32_t rank, int64_t count, int32_t elem_size,
                            const papcoll_context *context, papcoll_schedule *out) {
    (void)elem_size;
    (void)context;
    return reduce_scatter_build(ranks, rank, count, 0, out);
}

const algorithm_entry rs_halving_algorithm = {
    .info = {
        .name = "rs_halving",
        .description =
            "reduce-scatter by recursive vector halving, one message and one reduction per "
            "round",
        .source = "seed 002 Section III.C, Algorithm 1 (naive reduce-scatter)",
        .limitations =
            "a reduce-scatter (rank r keeps block bitreverse(r)), not an all-reduce; P must be "
            "a power of two; scratch: count / 2",
        .commutative_only = 1,
        .reduce_scatter = 1,
    },
    .build = rs_halving_build,
};
