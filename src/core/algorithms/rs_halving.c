/* rs_halving.c - reduce-scatter by recursive vector halving and distance doubling (Gavahi,
 * Sect. III.C, Algorithm 1, the "naive" version; MPICH's first half of Rabenseifner): each
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
#include "parts/halving.h"

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
        .source = "Gavahi Section III.C, Algorithm 1 (naive reduce-scatter)",
        .limitations =
            "a reduce-scatter (rank r keeps block bitreverse(r)), not an all-reduce; P must be "
            "a power of two; scratch: count / 2",
        .commutative_only = 1,
        .reduce_scatter = 1,
    },
    .build = rs_halving_build,
};
