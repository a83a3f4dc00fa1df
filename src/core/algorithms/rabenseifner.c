/* rabenseifner.c - Rabenseifner's all-reduce (MPICH's reduce_scatter_allgather): a
 * reduce-scatter by recursive vector halving and distance doubling (Gavahi, Sect. II.B and
 * Algorithm 1), then an all-gather by vector doubling and distance halving, with MPICH's fold
 * of the surplus ranks when P is not a power of two (Ruefenacht et al. 2017, Fig. 2).
 *
 * Worked example, P = 6: pof2 = 4, surplus = 2; the vector is cut into blocks B0..B3; ranks 0
 * and 2 fold into 1 and 3, which with 4 and 5 are exchange ranks 0..3:
 *
 *   round 1   0 --x0--> 1   2 --x2--> 3                           (fold)
 *   round 2   1 <-> 3: 1 keeps B0 B1, sends B2 B3; 3 the reverse   (mask 1, halves)
 *             4 <-> 5: 4 keeps B0 B1, 5 keeps B2 B3
 *   round 3   1 <-> 4: 1 keeps B0, 4 keeps B1                       (mask 2, quarters)
 *             3 <-> 5: 3 keeps B2, 5 keeps B3          each block now reduced over x0..x5
 *   round 4   1 <-> 4 and 3 <-> 5 swap their blocks                 (all-gather, mask 2)
 *   round 5   1 <-> 3 and 4 <-> 5 swap their halves                 (mask 1)
 *   round 6   1 --result--> 0   3 --result--> 2                     (unfold)
 *
 * Rounds: 2 log2 P for powers of two, 2 log2(pof2) + 2 otherwise. Zero-length blocks (count
 * below pof2, count 0) stay in the schedule as empty messages.
 * Choice: operand order is kept, so non-commutative ops are fine. A rank's partial block
 * always covers a contiguous range of ranks and its partner's range lies wholly below or
 * above; a half from below is reduced into the accumulator (source-left), a half from above
 * gets the accumulator reduced into it (MPI_Reduce_local only writes its right operand) and
 * the accumulator moves to where the half was received. It ping-pongs between the receive
 * buffer and one scratch buffer; a final copy of one block brings it back if needed.
 * Scratch, one buffer: the half kept in round 1 (scratch holds a sub-range of it, shifted to
 * start at 0), i.e. the first pof2/2 blocks (up to count/2 + pof2/4 elements) or the last;
 * on a rank that takes in a folded vector, count elements, the whole vector. Ranks that fold
 * away need none.
 */
#include "../schedule.h"
#include "parts/fold.h"
#include "parts/single_rank.h"

#define MAX_HALVINGS 31 /* pof2 <= 2^30 for a 32-bit P */

/* One round of the halving, as blocks [first, end); the all-gather replays it backwards. */
typedef struct halving_round {
    int32_t partner;              /* real rank */
    int32_t sent_first, sent_end; /* blocks handed to the partner */
    int32_t kept_first, kept_end; /* blocks this rank goes on reducing */
} halving_round;

/* Where the elements [first, end) of the vector live in `buffer`: the receive buffer holds
 * the whole vector, the scratch buffer only the round-1 half, from scratch_origin on. */
typedef struct vector_buffers {
    int32_t scratch;
    int64_t scratch_origin;
} vector_buffers;

static sched_region elements_in(vector_buffers buffers, int32_t buffer, int64_t first,
                                int64_t end) {
    int64_t offset = buffer == buffers.scratch ? first - buffers.scratch_origin : first;
    return sched_region_of(buffer, offset, end - first);
}

static int rabenseifner_build(int32_t ranks, int32_t rank, int64_t count, int32_t elem_size,
                              const papcoll_context *context, papcoll_schedule *out) {
    (void)elem_size;
    (void)context;
    const sched_region whole_send = SCHED_SEND_REGION(0, count);
    const sched_region whole_recv = SCHED_RECV_REGION(0, count);
    if (single_rank_copy(ranks, out)) return sched_finish(out);
    const fold_plan fold = fold_plan_of(ranks, rank);
    if (fold.hands_over) return fold_hand_over(out, rank, count, 0);
    const int32_t blocks = fold.exchange;

    /* Plan the halving: at mask m, exchange rank `me` talks to me ^ m and keeps the lower
     * half of its blocks if the partner is above, the upper half otherwise. */
    const int32_t me = fold.me;
    halving_round plan[MAX_HALVINGS] = {{0}};
    int32_t halvings = 0;
    int32_t kept_first = 0, kept_end = blocks;
    for (int32_t mask = 1; mask < blocks; mask <<= 1, halvings++) {
        halving_round *round = &plan[halvings];
        const int32_t middle = kept_first + (kept_end - kept_first) / 2;
        round->partner = sched_fold_real_rank(me ^ mask, fold.surplus);
        if (round->partner > rank) {
            round->sent_first = middle, round->sent_end = kept_end;
            kept_end = middle;
        } else {
            round->sent_first = kept_first, round->sent_end = middle;
            kept_first = middle;
        }
        round->kept_first = kept_first, round->kept_end = kept_end;
    }
#define BLOCK_START(block) sched_block_start(count, blocks, (block))

    const int64_t round1_first = BLOCK_START(plan[0].kept_first);
    const int64_t round1_length = BLOCK_START(plan[0].kept_end) - round1_first;
    vector_buffers buffers;
    buffers.scratch = sched_add_scratch(out, fold.takes_in ? count : round1_length);
    buffers.scratch_origin = round1_first;

    int32_t last = sched_copy(out, whole_send, whole_recv, SCHED_FIRST);
    if (fold.takes_in) {
        last = fold_take_in(out, rank, 0, sched_region_of(buffers.scratch, 0, count),
                            whole_recv, last, SCHED_NONE);
    }

    /* Reduce-scatter. The accumulator of the kept blocks is in `accumulator`; sent blocks
     * are always a sub-range of the blocks kept so far, hence present there too. */
    int32_t accumulator = SCHED_RECV_BUFFER;
    for (int32_t r = 0; r < halvings; r++) {
        const halving_round *round = &plan[r];
        const int64_t sent_first = BLOCK_START(round->sent_first);
        const int64_t sent_end = BLOCK_START(round->sent_end);
        const int64_t kept_first_element = BLOCK_START(round->kept_first);
        const int64_t kept_end_element = BLOCK_START(round->kept_end);
        const int32_t spare = accumulator == SCHED_RECV_BUFFER ? buffers.scratch
                                                               : SCHED_RECV_BUFFER;
        const sched_region kept_in_accumulator =
            elements_in(buffers, accumulator, kept_first_element, kept_end_element);
        const sched_region kept_in_spare =
            elements_in(buffers, spare, kept_first_element, kept_end_element);
        /* Send and receive wait only for earlier ops, never for each other: no deadlock
         * even when every send blocks until its receive is posted. */
        int32_t sent = sched_send(out, round->partner, 0,
                                  elements_in(buffers, accumulator, sent_first, sent_end),
                                  SCHED_AFTER(last));
        int32_t received =
            sched_recv(out, round->partner, 0, kept_in_spare, SCHED_AFTER(last));
        if (round->partner > rank) {
            last = sched_reduce(out, kept_in_accumulator, kept_in_spare, SCHED_SOURCE_LEFT,
                                SCHED_AFTER(sent, received));
            accumulator = spare;
        } else {
            last = sched_reduce(out, kept_in_spare, kept_in_accumulator, SCHED_SOURCE_LEFT,
                                SCHED_AFTER(sent, received));
        }
    }
    const int64_t own_first = BLOCK_START(kept_first), own_end = BLOCK_START(kept_end);
    if (accumulator != SCHED_RECV_BUFFER)
        last = sched_copy(out, elements_in(buffers, accumulator, own_first, own_end),
                          SCHED_RECV_REGION(own_first, own_end - own_first), SCHED_AFTER(last));

    /* All-gather: replay the halving backwards, swapping what is owned for what was sent.
     * Each round waits for the whole previous one, which also orders the two messages to
     * the same partner (halving and gathering) on each side. */
    int32_t gathered_first = kept_first, gathered_end = kept_end;
    int32_t previous_send = SCHED_NONE;
    for (int32_t r = halvings - 1; r >= 0; r--) {
        const halving_round *round = &plan[r];
        const int64_t owned_first = BLOCK_START(gathered_first);
        const int64_t incoming_first = BLOCK_START(round->sent_first);
        int32_t sent = sched_send(out, round->partner, 0,
                                  SCHED_RECV_REGION(owned_first,
                                                    BLOCK_START(gathered_end) - owned_first),
                                  SCHED_AFTER(last, previous_send));
        last = sched_recv(out, round->partner, 0,
                          SCHED_RECV_REGION(incoming_first,
                                            BLOCK_START(round->sent_end) - incoming_first),
                          SCHED_AFTER(last, previous_send));
        previous_send = sent;
        if (round->sent_first < gathered_first) gathered_first = round->sent_first;
        if (round->sent_end > gathered_end) gathered_end = round->sent_end;
    }
#undef BLOCK_START
    if (fold.takes_in)
        sched_send(out, rank - 1, 0, whole_recv, SCHED_AFTER(last, previous_send));
    return sched_finish(out);
}

const algorithm_entry rabenseifner_algorithm = {
    .info = {
        .name = "rabenseifner",
        .description =
            "reduce-scatter by recursive halving, then all-gather by recursive doubling (MPICH)",
        .source =
            "Gavahi Section II.B and Algorithm 1, Proficz 2018 Table 1 (Rabenseifner); "
            "Ruefenacht et al. 2017 Fig. 2 for P not a power of two",
        .limitations =
            "none; scratch of about count/2 elements (count on ranks that take in a folded "
            "vector)",
    },
    .build = rabenseifner_build,
};
