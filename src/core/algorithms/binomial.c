/* binomial.c - binomial-tree reduce to rank 0, then binomial-tree broadcast from rank 0,
 * one after the other (Open MPI's "nonoverlapping", Proficz 2018, Table 1 and its description of
 * the algorithms). Open MPI's choice for non-commutative ops: this one keeps operand order.
 *
 * Worked example, P = 6 (x_r is rank r's vector, "op" the reduction). Rank r's parent is r
 * with its lowest set bit cleared; its children are r + 1, r + 2, r + 4, ... below that bit.
 *
 *   reduce     round 1   1 --x1--> 0   3 --x3--> 2   5 --x5--> 4
 *                        0: x0 op x1   2: x2 op x3   4: x4 op x5
 *              round 2   2 --x2..x3--> 0             0: x0..x3
 *              round 3   4 --x4..x5--> 0             0: x0..x5
 *   broadcast  round 4   0 --> 4
 *              round 5   0 --> 2   4 --> 5
 *              round 6   0 --> 1   2 --> 3
 *
 * Rounds: 2 ceil(log2 P); every message is the whole vector.
 * Order: after hearing from children r+1 .. r+2^(k-1), rank r holds ranks [r, r + 2^k); the
 * next child r + 2^k brings [r + 2^k, r + 2^(k+1)), which goes on the right. MPI_Reduce_local
 * only writes its right operand, so the sum is written into the buffer that received it and
 * the accumulator moves there: it ping-pongs between one scratch buffer and the receive buffer.
 * It starts as the send buffer itself (never written), so only the root, when its number of
 * children is odd, needs a copy to make the result land in the receive buffer.
 * Scratch: count elements on ranks with children, none on leaves.
 * Choice: the broadcast sends to the child with the largest subtree (r + 2^k, k largest)
 * first, which is what makes it take ceil(log2 P) rounds.
 */
#include "../schedule.h"
#include "parts/single_rank.h"

static sched_region whole(int32_t buffer, int64_t count) {
    return sched_region_of(buffer, 0, count);
}

/* Children are rank + step for step = 1, 2, 4, ... below this bound (and below ranks). */
static int32_t child_step_bound(int32_t ranks, int32_t rank) {
    if (rank != 0) return rank & -rank; /* lowest set bit */
    int32_t bound = 1;
    while (bound < ranks) bound *= 2;
    return bound;
}

static int binomial_build(int32_t ranks, int32_t rank, int64_t count, int32_t elem_size,
                          const papcoll_context *context, papcoll_schedule *out) {
    (void)elem_size;
    (void)context;
    const int32_t root = 0;
    if (single_rank_copy(ranks, out)) return sched_finish(out);
    const int32_t step_bound = child_step_bound(ranks, rank);
    int32_t children = 0, largest_step = 0;
    for (int32_t step = 1; step < step_bound && rank + step < ranks; step *= 2) {
        children++;
        largest_step = step;
    }

    /* Reduce: fold the children in, smallest subtree (nearest rank) first. */
    const int32_t scratch = children > 0 ? sched_add_scratch(out, count) : SCHED_NONE;
    int32_t accumulator = SCHED_SEND_BUFFER;
    int32_t last = SCHED_NONE;
    if (rank == root && children % 2 == 1) {
        last = sched_copy(out, whole(SCHED_SEND_BUFFER, count), whole(scratch, count),
                          SCHED_FIRST);
        accumulator = scratch;
    }
    for (int32_t step = 1; step <= largest_step; step *= 2) {
        /* The first receive goes to scratch, never into the receive buffer, which may be the
         * send buffer the accumulator still is (MPI_IN_PLACE). */
        const int32_t spare = accumulator == scratch ? SCHED_RECV_BUFFER : scratch;
        int32_t received = sched_recv(out, rank + step, 0, whole(spare, count),
                                      SCHED_AFTER(last));
        last = sched_reduce(out, whole(accumulator, count), whole(spare, count),
                            SCHED_SOURCE_LEFT, SCHED_AFTER(received));
        accumulator = spare;
    }

    /* Broadcast: the result arrives in (or, at the root, already is in) the receive buffer. */
    int32_t result = last;
    if (rank != root) {
        const int32_t parent = rank & (rank - 1);
        int32_t sent = sched_send(out, parent, 0, whole(accumulator, count), SCHED_AFTER(last));
        /* Waits for the send: the accumulator may be the receive buffer. */
        result = sched_recv(out, parent, 0, whole(SCHED_RECV_BUFFER, count), SCHED_AFTER(sent));
    }
    for (int32_t step = largest_step; step >= 1; step /= 2)
        sched_send(out, rank + step, 0, whole(SCHED_RECV_BUFFER, count), SCHED_AFTER(result));
    return sched_finish(out);
}

const algorithm_entry binomial_algorithm = {
    .info = {
        .name = "binomial",
        .description =
            "binomial-tree reduce to rank 0, then binomial-tree broadcast from rank 0",
        .source = "Proficz 2018 Table 1 (Open MPI nonoverlapping: reduce followed by broadcast)",
        .limitations =
            "none; count elements of scratch on ranks with children; rank 0 does all the "
            "reductions on the critical path",
    },
    .build = binomial_build,
};
