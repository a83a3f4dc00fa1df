/* ring_phases.c - the ring reduce-scatter and ring all-gather phases (ring_phases.h), shared
 * by ring, segmented_ring, straggler and pap_hierarchical.
 *
 * Message m on a link carries tag m mod W and waits for message m - W on that link
 * (tag_window.h): same-tag messages are ordered by the DAG, up to W are in flight. Message m
 * on any link waits only for messages < m, hence no deadlock even when every send is
 * rendezvous. Blocks are reduced in different orders: commutative ops only. */
#include "ring_phases.h"

#include <stdlib.h>

/* Segments of a block: ceil(length / segment), but at least one so that an empty block
 * still sends its (empty) message. */
static int64_t block_segments(const ring_phases *ring, int32_t block) {
    int64_t length = sched_block_length(ring->count, ring->size, block);
    return length == 0 ? 1 : (length + ring->segment - 1) / ring->segment;
}

/* The block `back` places before `position` around the ring (0 <= back <= size). */
static int32_t block_before(const ring_phases *ring, int32_t back) {
    return (int32_t)(((int64_t)ring->position - back + ring->size) % ring->size);
}

/* The part of the receive buffer that holds segment `segment` of block `block`. */
static sched_region segment_region(const ring_phases *ring, int32_t block, int64_t segment) {
    int64_t start = sched_block_start(ring->count, ring->size, block);
    int64_t length = sched_block_length(ring->count, ring->size, block);
    int64_t first = segment * ring->segment;
    int64_t last = first + ring->segment < length ? first + ring->segment : length;
    return SCHED_RECV_REGION(start + (first < length ? first : length),
                             last > first ? last - first : 0);
}

int64_t ring_smallest_segment(int64_t count, int32_t ranks) {
    int64_t largest_block = sched_block_length(count, ranks, 0);
    int64_t segments_per_block = PAPCOLL_MAX_SEGMENTS / ranks;
    if (segments_per_block < 1) return largest_block > 0 ? largest_block : 1;
    int64_t smallest = largest_block / segments_per_block +
                       (largest_block % segments_per_block != 0);
    return smallest > 0 ? smallest : 1;
}

int ring_phases_open(ring_phases *ring, const int32_t *members, int32_t size, int32_t position,
                     int64_t count, int64_t segment_elements, int32_t vector_ready,
                     papcoll_schedule *out) {
    ring->size = size;
    ring->position = position;
    int32_t right = (position + 1) % size, left = (position + size - 1) % size;
    ring->right = members ? members[right] : right;
    ring->left = members ? members[left] : left;
    ring->count = count;
    ring->vector_ready = vector_ready;
    ring->segment_ready = ring->block_free = NULL;
    /* one message in flight a link until ring_reduce_scatter widens the window (an
     * algorithm with its own reduce-scatter goes straight to the all-gather) */
    ring->to_right = tag_window_open(ring->right, 1);
    ring->from_left = tag_window_open(ring->left, 1);
    int64_t largest_block = sched_block_length(count, size, 0);
    ring->segment = segment_elements == 0 || segment_elements > largest_block ? largest_block
                                                                              : segment_elements;
    if (ring->segment < 1) ring->segment = 1; /* count 0: every block and segment is empty */
    ring->most_segments = block_segments(ring, 0);
    /* Every segment of every block costs operations on every rank: the vector's segments are
     * bounded (the unsegmented ring, one segment a block, is bounded by P instead). */
    if (ring->most_segments > 1 && ring->most_segments > PAPCOLL_MAX_SEGMENTS / size) {
        sched_fail(out, PAPCOLL_ERR_LIMIT,
                   "segment_elements %lld cuts the %lld elements into %lld segments a "
                   "block x %d blocks, more than PAPCOLL_MAX_SEGMENTS (%d): use "
                   "segment_elements >= %lld",
                   (long long)ring->segment, (long long)count, (long long)ring->most_segments,
                   size, PAPCOLL_MAX_SEGMENTS, (long long)ring_smallest_segment(count, size));
        return 0;
    }
    ring->segment_ready = malloc((size_t)ring->most_segments * sizeof *ring->segment_ready);
    ring->block_free =
        malloc((size_t)size * (size_t)ring->most_segments * sizeof *ring->block_free);
    if (ring->segment_ready == NULL || ring->block_free == NULL) {
        ring_phases_close(ring);
        sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory building the ring");
        return 0;
    }
    for (int64_t k = 0; k < ring->most_segments; k++) ring->segment_ready[k] = vector_ready;
    for (int64_t k = 0; k < (int64_t)size * ring->most_segments; k++)
        ring->block_free[k] = vector_ready;
    return 1;
}

int32_t ring_reduce_scatter(ring_phases *ring, int32_t slots, int32_t window,
                            papcoll_schedule *out) {
    int64_t largest_block = sched_block_length(ring->count, ring->size, 0);
    int32_t slot_buffers[TAG_WINDOW_MAX], slot_last_reader[TAG_WINDOW_MAX];
    for (int32_t s = 0; s < slots; s++) {
        /* min() because an empty vector still has segment = 1 but needs no room */
        slot_buffers[s] =
            ring->size > 1
                ? sched_add_scratch(out, ring->segment < largest_block ? ring->segment
                                                                       : largest_block)
                : SCHED_NONE;
        slot_last_reader[s] = SCHED_NONE;
    }
    ring->to_right = tag_window_open(ring->right, window);
    ring->from_left = tag_window_open(ring->left, window);
    int64_t incoming = 0; /* messages received, to pick the slot */
    for (int32_t step = 0; step < ring->size - 1; step++) {
        int32_t send_block = block_before(ring, step + 1);
        int32_t reduce_block = block_before(ring, step + 2);
        int64_t send_segments = block_segments(ring, send_block);
        int64_t reduce_segments = block_segments(ring, reduce_block);
        for (int64_t k = 0; k < ring->most_segments; k++) {
            /* Segment k goes on as soon as step - 1 reduced it: segmented, a pipeline; with
             * one segment a block, the plain ring. */
            if (k < send_segments)
                ring->block_free[(int64_t)send_block * ring->most_segments + k] =
                    tag_window_send(out, &ring->to_right, segment_region(ring, send_block, k),
                                    ring->segment_ready[k]);
            if (k >= reduce_segments) continue;
            sched_region target = segment_region(ring, reduce_block, k);
            int32_t slot = (int32_t)(incoming++ % slots);
            sched_region landing = sched_region_of(slot_buffers[slot], 0, target.length);
            int32_t received =
                tag_window_recv(out, &ring->from_left, landing, slot_last_reader[slot]);
            ring->segment_ready[k] = sched_reduce(out, landing, target, SCHED_SOURCE_LEFT,
                                                  SCHED_AFTER(received, ring->vector_ready));
            slot_last_reader[slot] = ring->segment_ready[k];
        }
    }
    /* The last reduction was of block `position`: it is complete and starts the gather. */
    return ring->segment_ready[0];
}

void ring_phases_block_final(ring_phases *ring, int32_t final) {
    for (int64_t k = 0; k < ring->most_segments; k++) ring->segment_ready[k] = final;
}

void ring_all_gather(ring_phases *ring, papcoll_schedule *out) {
    for (int32_t step = 0; step < ring->size - 1; step++) {
        int32_t send_block = block_before(ring, step);
        int32_t gather_block = block_before(ring, step + 1);
        int64_t send_segments = block_segments(ring, send_block);
        int64_t gather_segments = block_segments(ring, gather_block);
        for (int64_t k = 0; k < ring->most_segments; k++) {
            if (k < send_segments)
                tag_window_send(out, &ring->to_right, segment_region(ring, send_block, k),
                                ring->segment_ready[k]);
            if (k < gather_segments)
                /* The reduce-scatter sent this very segment in step `step`; overwriting it
                 * must wait for that send (which itself followed the reduction there). */
                ring->segment_ready[k] = tag_window_recv(
                    out, &ring->from_left, segment_region(ring, gather_block, k),
                    ring->block_free[(int64_t)gather_block * ring->most_segments + k]);
        }
    }
}

void ring_phases_block_read_by(ring_phases *ring, int32_t block, int32_t reader) {
    ring->block_free[(int64_t)block * ring->most_segments] = reader;
}

int32_t ring_phases_block_free(const ring_phases *ring, int32_t block) {
    return ring->block_free[(int64_t)block * ring->most_segments];
}

void ring_phases_close(ring_phases *ring) {
    free(ring->segment_ready);
    free(ring->block_free);
    ring->segment_ready = ring->block_free = NULL;
}
