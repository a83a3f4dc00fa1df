/* ring.c - ring all-reduce: a ring reduce-scatter followed by a ring all-gather (Patarasuk &
 * Yuan 2009, Sect. 4.1, Fig. 1; Proficz 2018, Table 1 "ring"). Bandwidth optimal: each rank
 * sends 2 (P-1)/P x count elements, the lower bound of Patarasuk & Yuan 2009, Lemma 4. Also
 * builds the segmented ring (segmented_ring.c) and rings laid out in a given rank order
 * (ring.h).
 *
 * Worked example, P = 4 in ring order 0 -> 1 -> 2 -> 3 -> 0, the vector cut into blocks
 * B0..B3 (position i sends block (i - s - 1) mod P in reduce-scatter step s, and block
 * (i - s) mod P in all-gather step s; "+" = received and reduced, "=" = received and kept):
 *
 *   reduce-scatter
 *   step 0   0 -B3-> 1+   1 -B0-> 2+   2 -B1-> 3+   3 -B2-> 0+
 *   step 1   0 -B2-> 1+   1 -B3-> 2+   2 -B0-> 3+   3 -B1-> 0+
 *   step 2   0 -B1-> 1+   1 -B2-> 2+   2 -B3-> 3+   3 -B0-> 0+   (now i holds all of Bi)
 *   all-gather
 *   step 0   0 -B0-> 1=   1 -B1-> 2=   2 -B2-> 3=   3 -B3-> 0=
 *   step 1   0 -B3-> 1=   1 -B0-> 2=   2 -B1-> 3=   3 -B2-> 0=
 *   step 2   0 -B2-> 1=   1 -B3-> 2=   2 -B0-> 3=   3 -B1-> 0=
 *
 * Choices. Blocks are sched_block_start's near-equal split (Patarasuk & Yuan 2009 round the
 * other way: all blocks ceil(n/P) but the last; same bound when P divides n, flatter otherwise).
 * The schedule first copies send -> recv and never reads the send buffer again, so MPI_IN_PLACE
 * needs no special case; blocks are reduced in place in recv. Incoming reduce-scatter data lands
 * in a ring of scratch slots, so the next receive is posted while the previous one is reduced:
 * unsegmented, 2 slots of the largest block (ceil(count/P) elements); segmented, 4 slots of one
 * segment. All-gather data goes straight into recv. Message m on a link carries tag m mod W (W =
 * slot count). The two phases are parts/ring_phases (shared with straggler and
 * pap_hierarchical), which says why the message sequence cannot deadlock. Reduction order
 * differs per block: commutative only.
 */
#include "ring.h"

#include "parts/rank_order.h"
#include "parts/ring_phases.h"

enum {
    RING_BLOCK_SLOTS = 2,   /* unsegmented: one receive overlaps one reduction */
    RING_SEGMENT_SLOTS = 4, /* segmented: a few segments in flight keep the pipe full */
};

int ring_build_with_order(int32_t ranks, int32_t rank, int64_t count, const int32_t *order,
                          int64_t segment_elements, papcoll_schedule *out) {
    int32_t position = rank_order_position(ranks, rank, order, out);
    if (position < 0) return sched_finish(out);
    if (segment_elements < 0)
        return sched_fail(out, PAPCOLL_ERR_ARGUMENT, "segment size must not be negative");
    /* Copying first is the whole answer for P = 1, and for P > 1 it frees the schedule
     * from the send buffer (MPI_IN_PLACE aliases it with recv). */
    int32_t copied = sched_copy_own_vector(out);
    if (ranks == 1) return sched_finish(out);
    ring_phases ring;
    if (!ring_phases_open(&ring, order, ranks, position, count, segment_elements, copied, out))
        return sched_finish(out);
    /* W = slots: the receiver holds at most `slots` reduce-scatter messages, so more sends
     * in flight would only wait. */
    int32_t slots = ring.most_segments == 1 ? RING_BLOCK_SLOTS : RING_SEGMENT_SLOTS;
    ring_reduce_scatter(&ring, slots, slots, out);
    ring_all_gather(&ring, out);
    ring_phases_close(&ring);
    return sched_finish(out);
}

static int ring_build(int32_t ranks, int32_t rank, int64_t count, int32_t elem_size,
                      const papcoll_context *context, papcoll_schedule *out) {
    (void)elem_size;
    const papcoll_parameters *parameters = &context->parameters;
    const int32_t *order = parameters->rank_order_count == ranks ? parameters->rank_order : NULL;
    return ring_build_with_order(ranks, rank, count, order, 0, out);
}

const algorithm_entry ring_algorithm = {
    .info = {
        .name = "ring",
        .description =
            "ring reduce-scatter then ring all-gather; bandwidth optimal, P-1 + P-1 steps",
        .source = "Patarasuk & Yuan 2009 S4.1; Proficz 2018 Table 1",
        .limitations =
            "commutative ops only (blocks are reduced in different orders); optional rank_order"
            " must be a permutation; scratch 2 x ceil(count/P)",
        .commutative_only = 1,
    },
    .build = ring_build,
};
