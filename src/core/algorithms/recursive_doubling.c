/* recursive_doubling.c - recursive doubling all-reduce with pairwise exchange (MPICH's
 * algorithm, Ruefenacht et al. 2017, Sect. 2, Algorithm 1), with MPICH's fix for P not a power
 * of two (Ruefenacht et al. 2017, Fig. 2): surplus ranks fold into a neighbour first and get the
 * result back last.
 *
 * Worked example, P = 6: pof2 = 4, surplus = 2; ranks 0 and 2 fold into 1 and 3, which
 * join 4 and 5 as exchange ranks 0..3 (x_r is rank r's vector, "op" the reduction):
 *
 *   round 1   0 --x0--> 1       2 --x2--> 3          1: x0 op x1     3: x2 op x3
 *   round 2   1 <---> 3         4 <---> 5            1, 3: x0..x3    4, 5: x4 op x5
 *             (exchange ranks 0 <-> 1 and 2 <-> 3: mask 1)
 *   round 3   1 <---> 4         3 <---> 5            1, 3, 4, 5: x0..x5
 *             (exchange ranks 0 <-> 2 and 1 <-> 3: mask 2)
 *   round 4   1 --x0..x5--> 0   3 --x0..x5--> 2
 *
 * Rounds: log2 P for powers of two, log2(pof2) + 2 otherwise; every message is the whole
 * vector. Operand order is kept, so non-commutative ops are fine: a rank's partial result
 * always covers a contiguous range of ranks, and the partner's range lies wholly below or
 * above it. A received partial from below goes on the left (REDUCE into the accumulator,
 * source-left); one from above goes on the right, which MPI_Reduce_local can only do by
 * writing into the received copy, so the accumulator then moves to the buffer that received.
 * The accumulator thus ping-pongs between the receive buffer and one scratch buffer; the
 * number of moves is known up front, so it starts where it will end in the receive buffer and
 * no final copy is needed.
 * Scratch: count elements on every rank that takes part in the exchange; none on the ranks
 * that fold (they send straight from the send buffer and receive straight into the receive
 * buffer, the receive waiting for the send so MPI_IN_PLACE stays safe). Exchanging ranks read
 * the send buffer only in their first op, a copy, for the same reason.
 */
#include "../schedule.h"
#include "parts/fold.h"
#include "parts/single_rank.h"

static sched_region whole(int32_t buffer, int64_t count) {
    return sched_region_of(buffer, 0, count);
}

/* The one of {receive buffer, scratch} that does not hold the accumulator. */
static int32_t spare_of(int32_t accumulator, int32_t scratch) {
    return accumulator == scratch ? SCHED_RECV_BUFFER : scratch;
}

static int recursive_doubling_build(int32_t ranks, int32_t rank, int64_t count,
                                    int32_t elem_size, const papcoll_context *context,
                                    papcoll_schedule *out) {
    (void)elem_size;
    (void)context;
    if (single_rank_copy(ranks, out)) return sched_finish(out);
    const fold_plan fold = fold_plan_of(ranks, rank);
    if (fold.hands_over) return fold_hand_over(out, rank, count, 0);

    const int32_t me = fold.me;
    const int32_t scratch = sched_add_scratch(out, count);
    /* The accumulator moves once per round whose partner lies above (bit of `me` clear). */
    int32_t moves = 0;
    for (int32_t mask = 1; mask < fold.exchange; mask <<= 1) moves += (me & mask) == 0;
    int32_t accumulator = moves % 2 == 1 ? scratch : SCHED_RECV_BUFFER;

    int32_t last = sched_copy(out, whole(SCHED_SEND_BUFFER, count), whole(accumulator, count),
                              SCHED_FIRST);
    if (fold.takes_in) {
        last = fold_take_in(out, rank, 0, whole(spare_of(accumulator, scratch), count),
                            whole(accumulator, count), last, SCHED_NONE);
    }
    for (int32_t mask = 1; mask < fold.exchange; mask <<= 1) {
        const int32_t partner = sched_fold_real_rank(me ^ mask, fold.surplus);
        const int32_t spare = spare_of(accumulator, scratch);
        /* Send and receive both wait only for earlier ops, never for each other, so the
         * exchange cannot deadlock even when every send blocks until its receive is posted. */
        int32_t sent = sched_send(out, partner, 0, whole(accumulator, count), SCHED_AFTER(last));
        int32_t received = sched_recv(out, partner, 0, whole(spare, count), SCHED_AFTER(last));
        if (partner > rank) {
            last = sched_reduce(out, whole(accumulator, count), whole(spare, count),
                                SCHED_SOURCE_LEFT, SCHED_AFTER(sent, received));
            accumulator = spare;
        } else {
            /* Writes what the send reads: it must wait for the send as well. */
            last = sched_reduce(out, whole(spare, count), whole(accumulator, count),
                                SCHED_SOURCE_LEFT, SCHED_AFTER(sent, received));
        }
    }
    if (fold.takes_in)
        sched_send(out, rank - 1, 0, whole(SCHED_RECV_BUFFER, count), SCHED_AFTER(last));
    return sched_finish(out);
}

const algorithm_entry recursive_doubling_algorithm = {
    .info = {
        .name = "recursive_doubling",
        .description =
            "pairwise exchange of the whole vector in log2 P rounds (MPICH), non-powers of two "
            "folded",
        .source = "Ruefenacht et al. 2017 Section 2, Algorithm 1 and Fig. 2 (MPICH recursive "
                  "doubling)",
        .limitations =
            "none; count elements of scratch per exchanging rank; every round moves the whole "
            "vector",
    },
    .build = recursive_doubling_build,
};
