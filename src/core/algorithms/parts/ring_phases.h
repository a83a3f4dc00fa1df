/* ring_phases.h - the ring reduce-scatter and the ring all-gather (Patarasuk & Yuan 2009,
 * Sect. 4.1) over any list of member ranks, as phases an algorithm composes: ring.c runs both
 * on all ranks (segmented_ring too, with segments that pipeline through the steps),
 * straggler.c runs the reduce-scatter among its on-time core, pap_hierarchical.c both among a
 * site's leaders. One home for the block order, the landing slots and the windowed tags, so
 * that every algorithm built on a ring gets the same deadlock-free message sequence (ring.c's
 * header works an example through).
 *
 * Layout: the `count` elements of the receive buffer are cut into one block per member
 * (sched_block_start's near-equal split); position i of the ring sends to position i + 1.
 * The reduce-scatter leaves position i with the members' sum of block i; the all-gather
 * then passes every block around so that all members hold all blocks. Every block and step
 * has at least one message, empty where the block is, so both sides agree on the sequence.
 *
 * Use: ring_phases_open, then ring_reduce_scatter, optionally ring_phases_block_final (more
 * went into this rank's block than the reduce-scatter), then ring_all_gather, and
 * ring_phases_close. The all-gather continues the reduce-scatter's links and overwrites
 * blocks only after the reduce-scatter's sends of them, so it needs the reduce-scatter
 * before it. */
#ifndef PAPCOLL_ALGORITHMS_PARTS_RING_PHASES_H
#define PAPCOLL_ALGORITHMS_PARTS_RING_PHASES_H

#include <stdint.h>

#include "../../hidden.h"
#include "../../schedule.h"
#include "tag_window.h"

typedef struct ring_phases {
    int32_t size;             /* members around the ring, = blocks */
    int32_t position;         /* this rank's place in the ring */
    int32_t right, left;      /* the ranks at position + 1 and position - 1 */
    int64_t count;            /* elements, in the receive buffer */
    int64_t segment;          /* elements a segment (a whole largest block unsegmented) */
    int64_t most_segments;    /* segments of the largest block (1: unsegmented) */
    int32_t vector_ready;     /* the op after which the receive buffer holds this rank's
                                 vector */
    tag_window_link to_right, from_left;
    /* segment_ready[k]: the op after which segment k of the block this rank sends next holds
     * the right data; block_free[b x most_segments + k]: the reduce-scatter's send that last
     * reads segment k of block b, which a receive into it must follow */
    int32_t *segment_ready;
    int32_t *block_free;
} ring_phases;

/* The smallest segment_elements for which a ring cuts `count` elements over `ranks` blocks
 * into at most PAPCOLL_MAX_SEGMENTS segments (ring_phases_open refuses smaller ones). */
PAPCOLL_HIDDEN
int64_t ring_smallest_segment(int64_t count, int32_t ranks);

/* Lays out a ring of `size` members: members[i] at position i (NULL: rank i), this rank at
 * `position`; `count` elements cut into `size` blocks and, segment_elements > 0, every
 * block into segments of that many elements (0 or more than a block: one segment a block).
 * vector_ready: the op after which the receive buffer holds this rank's vector (both
 * phases work in the receive buffer). Returns 1, or 0 with a failure in out (a segment
 * too small for PAPCOLL_MAX_SEGMENTS, no memory); release with ring_phases_close. */
PAPCOLL_HIDDEN
int ring_phases_open(ring_phases *ring, const int32_t *members, int32_t size, int32_t position,
                     int64_t count, int64_t segment_elements, int32_t vector_ready,
                     papcoll_schedule *out);

/* The ring reduce-scatter: size - 1 steps; in step s position i sends its partial of block
 * i - s - 1 and reduces the partial of block i - s - 2 from its left into its own. Incoming
 * data lands in `slots` scratch slots of one segment (up to TAG_WINDOW_MAX) so that the
 * next receive is posted while the previous one is reduced; messages carry tags 0 ..
 * window - 1 on each link (tag_window.h). Returns the op after which this rank's block is
 * complete when unsegmented (segmented: each segment's is in segment_ready). */
PAPCOLL_HIDDEN
int32_t ring_reduce_scatter(ring_phases *ring, int32_t slots, int32_t window,
                            papcoll_schedule *out);

/* This rank's block is final once op `final` is done: more than the reduce-scatter went
 * into it (pap_hierarchical adds the other sites' partials); the all-gather sends it after. */
PAPCOLL_HIDDEN
void ring_phases_block_final(ring_phases *ring, int32_t final);

/* The ring all-gather: size - 1 steps; in step s position i sends block i - s and receives
 * block i - s - 1 straight into the receive buffer, after the reduce-scatter's send of it. */
PAPCOLL_HIDDEN
void ring_all_gather(ring_phases *ring, papcoll_schedule *out);

/* An algorithm with a reduce-scatter of its own (canonical_scatter) before the ring
 * all-gather: op `reader` is the last to read block `block` (unsegmented), so the
 * all-gather's receive into it must follow. */
PAPCOLL_HIDDEN
void ring_phases_block_read_by(ring_phases *ring, int32_t block, int32_t reader);
/* The send that last reads block `block` in the reduce-scatter (unsegmented), or the
 * vector_ready op for this rank's own block: what a receive into the block must follow. */
PAPCOLL_HIDDEN
int32_t ring_phases_block_free(const ring_phases *ring, int32_t block);

PAPCOLL_HIDDEN
void ring_phases_close(ring_phases *ring);

#endif /* PAPCOLL_ALGORITHMS_PARTS_RING_PHASES_H */
