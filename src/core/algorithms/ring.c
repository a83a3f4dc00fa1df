/* ring.c - ring all-reduce: a ring reduce-scatter followed by a ring all-gather (seed 001
 * S4.1, Fig. 1; seed 000 Table 1 "ring"). Bandwidth optimal: each rank sends
 * 2 (P-1)/P x count elements, the lower bound of seed 001 Lemma 4. Also builds the
 * segmented ring (segmented_ring.c) and rings laid out in a given rank order (ring.h).
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
 * Choices. Blocks are sched_block_start's near-equal split (seed 001 rounds the other way:
 * all blocks ceil(n/P) but the last; same bound when P divides n, flatter otherwise). The
 * schedule first copies send -> recv and never reads the send buffer again, so MPI_IN_PLACE
 * needs no special case; blocks are reduced in place in recv. Incoming reduce-scatter data
 * lands in a ring of scratch slots, so the next receive is posted while the previous one is
 * reduced: unsegmented, 2 slots of the largest block (ceil(count/P) elements); segmented,
 * 4 slots of one segment. All-gather data goes straight into recv. Every block and step has
 * at least one message, empty when the block is (count < P, count 0), so both sides always
 * agree on the message sequence. Message m on a link carries tag m mod W (W = slot count)
 * and waits for message m - W on that link: same-tag messages are ordered by the DAG, up to
 * W are in flight. Message m on any link waits only for messages < m, hence no deadlock
 * even when every send is rendezvous. Reduction order differs per block: commutative only.
 */
#include "ring.h"

#include <stdlib.h>

#include "parts/rank_order.h"
#include "parts/tag_window.h"

enum {
    RING_BLOCK_SLOTS = 2,   /* unsegmented: one receive overlaps one reduction */
    RING_SEGMENT_SLOTS = 4, /* segmented: a few segments in flight keep the pipe full */
    RING_MAX_SLOTS = TAG_WINDOW_MAX,
};

/* Segments of a block: ceil(length / segment_elements), but at least one so that an empty
 * block still sends its (empty) message. */
static int64_t block_segment_count(int64_t block_length, int64_t segment_elements) {
    return block_length == 0 ? 1 : (block_length + segment_elements - 1) / segment_elements;
}

typedef struct ring_blocks {
    int64_t count;
    int32_t ranks;
    int64_t segment_elements;
} ring_blocks;

static int64_t ring_segments(const ring_blocks *blocks, int32_t block) {
    return block_segment_count(sched_block_length(blocks->count, blocks->ranks, block),
                               blocks->segment_elements);
}

int64_t ring_smallest_segment(int64_t count, int32_t ranks) {
    int64_t largest_block = sched_block_length(count, ranks, 0);
    int64_t segments_per_block = PAPCOLL_MAX_SEGMENTS / ranks;
    if (segments_per_block < 1) return largest_block > 0 ? largest_block : 1;
    int64_t smallest = largest_block / segments_per_block +
                       (largest_block % segments_per_block != 0);
    return smallest > 0 ? smallest : 1;
}

/* The block `back` places before `position` around the ring (0 <= back <= ranks). */
static int32_t ring_block_before(int32_t position, int32_t back, int32_t ranks) {
    return (int32_t)(((int64_t)position - back + ranks) % ranks);
}

/* The part of the receive buffer that holds segment `segment` of block `block`. */
static sched_region ring_segment(const ring_blocks *blocks, int32_t block, int64_t segment) {
    int64_t start = sched_block_start(blocks->count, blocks->ranks, block);
    int64_t length = sched_block_length(blocks->count, blocks->ranks, block);
    int64_t first = segment * blocks->segment_elements;
    int64_t last = first + blocks->segment_elements < length ? first + blocks->segment_elements
                                                             : length;
    return SCHED_RECV_REGION(start + (first < length ? first : length),
                             last > first ? last - first : 0);
}

int ring_build_with_order(int32_t ranks, int32_t rank, int64_t count, const int32_t *order,
                          int64_t segment_elements, papcoll_schedule *out) {
    int32_t position = rank_order_position(ranks, rank, order, out);
    if (position < 0) return sched_finish(out);
    if (segment_elements < 0)
        return sched_fail(out, PAPCOLL_ERR_ARGUMENT, "segment size must not be negative");
    /* Copying first is the whole answer for P = 1, and for P > 1 it frees the schedule
     * from the send buffer (MPI_IN_PLACE aliases it with recv). */
    int32_t copied =
        sched_copy(out, SCHED_SEND_REGION(0, count), SCHED_RECV_REGION(0, count), SCHED_FIRST);
    if (ranks == 1) return sched_finish(out);

    int64_t largest_block = sched_block_length(count, ranks, 0);
    int64_t segment = segment_elements == 0 || segment_elements > largest_block
                          ? largest_block
                          : segment_elements;
    if (segment < 1) segment = 1; /* count 0: every block and segment is empty */
    ring_blocks blocks = {count, ranks, segment};
    int64_t most_segments = ring_segments(&blocks, 0);
    /* Every segment of every block costs operations on every rank: the vector's segments are
     * bounded (the unsegmented ring, one segment a block, is bounded by P instead). */
    if (most_segments > 1 && most_segments > PAPCOLL_MAX_SEGMENTS / ranks)
        return sched_fail(out, PAPCOLL_ERR_LIMIT,
                          "segment_elements %lld cuts the %lld elements into %lld segments a "
                          "block x %d blocks, more than PAPCOLL_MAX_SEGMENTS (%d): use "
                          "segment_elements >= %lld",
                          (long long)segment, (long long)count, (long long)most_segments,
                          ranks, PAPCOLL_MAX_SEGMENTS,
                          (long long)ring_smallest_segment(count, ranks));
    int32_t slots = most_segments == 1 ? RING_BLOCK_SLOTS : RING_SEGMENT_SLOTS;
    int32_t slot_buffers[RING_MAX_SLOTS];
    int32_t slot_last_reader[RING_MAX_SLOTS];
    for (int32_t s = 0; s < slots; s++) {
        /* min() because an empty vector still has segment = 1 but needs no room */
        slot_buffers[s] = sched_add_scratch(out, segment < largest_block ? segment : largest_block);
        slot_last_reader[s] = SCHED_NONE;
    }

    /* ready[k]: the op after which segment k of the block this step sends holds the right
     * data; reduce_scatter_sends[s][k]: the reduce-scatter send that last reads segment k of
     * the block the all-gather overwrites in step s (the same block, see the header). */
    int32_t *ready = malloc((size_t)most_segments * sizeof *ready);
    int32_t *reduce_scatter_sends =
        malloc((size_t)(ranks - 1) * (size_t)most_segments * sizeof *reduce_scatter_sends);
    if (ready == NULL || reduce_scatter_sends == NULL) {
        free(ready);
        free(reduce_scatter_sends);
        return sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory building the ring");
    }
    for (int64_t k = 0; k < most_segments; k++) ready[k] = copied;

    int32_t right = (position + 1) % ranks, left = (position + ranks - 1) % ranks;
    /* W = slots: the receiver holds at most `slots` reduce-scatter messages, so more sends
     * in flight would only wait. */
    tag_window_link to_right = tag_window_open(order ? order[right] : right, slots);
    tag_window_link from_left = tag_window_open(order ? order[left] : left, slots);
    int64_t incoming = 0; /* reduce-scatter messages received, to pick the slot */

    for (int32_t step = 0; step < ranks - 1; step++) {
        int32_t send_block = ring_block_before(position, step + 1, ranks);
        int32_t reduce_block = ring_block_before(position, step + 2, ranks);
        int64_t send_segments = ring_segments(&blocks, send_block);
        int64_t reduce_segments = ring_segments(&blocks, reduce_block);
        for (int64_t k = 0; k < most_segments; k++) {
            /* Segment k goes on as soon as step - 1 reduced it: the pipeline of
             * segmented_ring; with one segment per block this is the plain ring. */
            if (k < send_segments)
                reduce_scatter_sends[(int64_t)step * most_segments + k] = tag_window_send(
                    out, &to_right, ring_segment(&blocks, send_block, k), ready[k]);
            if (k >= reduce_segments) continue;
            sched_region target = ring_segment(&blocks, reduce_block, k);
            int32_t slot = (int32_t)(incoming++ % slots);
            sched_region landing = sched_region_of(slot_buffers[slot], 0, target.length);
            int32_t received =
                tag_window_recv(out, &from_left, landing, slot_last_reader[slot]);
            ready[k] = sched_reduce(out, landing, target, SCHED_SOURCE_LEFT,
                                    SCHED_AFTER(received, copied));
            slot_last_reader[slot] = ready[k];
        }
    }
    /* The last reduction was of block `position`: it is complete and starts the gather. */
    for (int32_t step = 0; step < ranks - 1; step++) {
        int32_t send_block = ring_block_before(position, step, ranks);
        int32_t gather_block = ring_block_before(position, step + 1, ranks);
        int64_t send_segments = ring_segments(&blocks, send_block);
        int64_t gather_segments = ring_segments(&blocks, gather_block);
        for (int64_t k = 0; k < most_segments; k++) {
            if (k < send_segments)
                tag_window_send(out, &to_right, ring_segment(&blocks, send_block, k), ready[k]);
            if (k < gather_segments)
                /* The reduce-scatter sent this very segment in step `step`; overwriting it
                 * must wait for that send (which itself followed the reduction there). */
                ready[k] = tag_window_recv(
                    out, &from_left, ring_segment(&blocks, gather_block, k),
                    reduce_scatter_sends[(int64_t)step * most_segments + k]);
        }
    }
    free(ready);
    free(reduce_scatter_sends);
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
        .source = "seed 001 S4.1 (Patarasuk & Yuan ring); seed 000 Table 1",
        .limitations =
            "commutative ops only (blocks are reduced in different orders); optional rank_order"
            " must be a permutation; scratch 2 x ceil(count/P)",
        .commutative_only = 1,
    },
    .build = ring_build,
};
