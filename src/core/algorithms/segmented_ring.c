/* segmented_ring.c - the ring all-reduce of ring.c with every block cut further into
 * segments that pipeline through the steps (Proficz 2018, Table 1 "segmented ring", after Open
 * MPI; the ring itself is Patarasuk & Yuan 2009, Sect. 4.1). The builder is
 * ring_build_with_order (ring.h).
 *
 * Worked example, P = 3, count = 12, 2 elements per segment: blocks B0 B1 B2 of 4 elements,
 * each cut into segments Bb.0 and Bb.1. Messages on each link, in order ("+" reduced on
 * arrival, "=" kept):
 *
 *            reduce-scatter step 0 | step 1          all-gather step 0 | step 1
 *   0 -> 1   B2.0+ B2.1+           | B1.0+ B1.1+     B0.0= B0.1=       | B2.0= B2.1=
 *   1 -> 2   B0.0+ B0.1+           | B2.0+ B2.1+     B1.0= B1.1=       | B0.0= B0.1=
 *   2 -> 0   B1.0+ B1.1+           | B0.0+ B0.1+     B2.0= B2.1=       | B1.0= B1.1=
 *
 * Rank 0 sends B1.0 in step 1 as soon as it has reduced the B1.0 received from 2, while
 * B1.1 may still be on its way: segment k of step s waits only for segment k of step s-1.
 * So the next hop starts on a segment while this one still receives the block's rest, and
 * receiving, reducing and sending overlap.
 * Scratch: 4 slots of one segment (not whole blocks), used round-robin by incoming
 * reduce-scatter segments. Default segment: 65536 bytes / elem_size elements (at least 1,
 * and large enough that the vector holds at most PAPCOLL_MAX_SEGMENTS segments), chosen as
 * a size well past the latency-dominated range yet small enough that a block of
 * a large vector spans several segments; the parameters' segment_elements overrides it. A
 * segment as large as a block makes this the plain ring (with 2 slots). Optional rank_order
 * as for ring. Commutative only, like ring.
 */
#include "parts/ring_phases.h"
#include "ring.h"

enum { SEGMENTED_RING_DEFAULT_SEGMENT_BYTES = 65536 };

static int segmented_ring_build(int32_t ranks, int32_t rank, int64_t count, int32_t elem_size,
                                const papcoll_context *context, papcoll_schedule *out) {
    int64_t segment_elements = context->parameters.segment_elements;
    if (segment_elements == 0) {
        segment_elements = SEGMENTED_RING_DEFAULT_SEGMENT_BYTES / (elem_size > 0 ? elem_size : 1);
        /* A vector past 64 GiB gets larger segments rather than more of them. */
        int64_t smallest = ring_smallest_segment(count, ranks);
        if (segment_elements < smallest) segment_elements = smallest;
    }
    const papcoll_parameters *parameters = &context->parameters;
    const int32_t *order = parameters->rank_order_count == ranks ? parameters->rank_order : NULL;
    return ring_build_with_order(ranks, rank, count, order, segment_elements, out);
}

const algorithm_entry segmented_ring_algorithm = {
    .info = {
        .name = "segmented_ring",
        .description =
            "ring all-reduce whose blocks are cut into segments that pipeline through the steps",
        .source = "Proficz 2018 Table 1 (segmented ring, Open MPI); ring of Patarasuk & Yuan "
                  "2009 S4.1",
        .limitations =
            "commutative ops only; segment_elements (0 = 65536 bytes' worth) sets the segment; "
            "optional rank_order must be a permutation; scratch 4 segments",
        .commutative_only = 1,
    },
    .build = segmented_ring_build,
};
