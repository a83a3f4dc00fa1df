/* rs_halving.c - reduce-scatter by recursive vector halving (seed 002 Section III.C,
 * Algorithm 1, the "naive" version): rank r ends with block r of P near-equal blocks, reduced
 * over all ranks. Each round halves the blocks a rank works on: it sends the half its partner
 * keeps in one message and reduces the half it keeps in one reduction once it has arrived.
 * The baseline of priority_rs. Choice: partners at distance P/2 first, down to 1 (vector
 * halving, distance halving), so that rank r keeps block r as MPI_Reduce_scatter_block does;
 * seed 002's listing shows distance doubling, which leaves the blocks bit-reversed.
 *
 * Worked example, P = 4, blocks B0..B3 (x_r: rank r's vector):
 *   round 1 (distance 2)   0 <-> 2: 0 keeps B0 B1, 2 keeps B2 B3; 1 <-> 3 likewise
 *   round 2 (distance 1)   0 <-> 1: 0 keeps B0, 1 keeps B1; 2 <-> 3: 2 keeps B2, 3 B3
 * Rank r's receive buffer then holds block r of x0 + x1 + x2 + x3 (the rest is scratch).
 * Scratch: count / 2 elements (the first round's kept half). P must be a power of two.
 */
#include <stdlib.h>

#include "halving.h"

/* Shared with priority_rs.c: the reduce-scatter of rank `rank` among `ranks` (a power of
 * two), result block `rank`. */
int reduce_scatter_build(int32_t ranks, int32_t rank, int64_t count, int priority,
                         papcoll_schedule *out);

int reduce_scatter_build(int32_t ranks, int32_t rank, int64_t count, int priority,
                         papcoll_schedule *out) {
    if ((ranks & (ranks - 1)) != 0)
        return sched_fail(out, PAPCOLL_ERR_UNSUPPORTED, "a reduce-scatter by recursive halving "
                          "needs P to be a power of two, not %d", ranks);
    int32_t *identity = malloc((size_t)ranks * sizeof *identity);
    if (identity == NULL) return sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory");
    for (int32_t r = 0; r < ranks; r++) identity[r] = r;
    int32_t start = sched_copy(out, SCHED_SEND_REGION(0, count), SCHED_RECV_REGION(0, count),
                               SCHED_FIRST);
    halving_state state;
    halving_reduce_scatter(out, ranks, rank, identity, count, start, priority, &state);
    halving_state_free(&state);
    free(identity);
    out->result_offset = sched_block_start(count, ranks, rank);
    out->result_length = sched_block_length(count, ranks, rank);
    return sched_finish(out);
}

static int rs_halving_build(int32_t ranks, int32_t rank, int64_t count, int32_t elem_size,
                            const papcoll_context *context, papcoll_schedule *out) {
    (void)elem_size;
    (void)context;
    return reduce_scatter_build(ranks, rank, count, 0, out);
}

const algorithm_entry rs_halving_algorithm = {
    {"rs_halving",
     "reduce-scatter by recursive vector halving, one message and one reduction per round",
     "seed 002 Section III.C, Algorithm 1 (naive reduce-scatter)",
     "a reduce-scatter (rank r keeps block r), not an all-reduce; P must be a power of two; "
     "scratch: count / 2",
     1, 0, 0, 1},
    rs_halving_build,
};
