/* linear_tree.c - segmented linear tree all-reduce (Proficz 2018, Table 1, after Open MPI),
 * written as Proficz 2018, Fig. 5 (the SLT pseudo-code, whose chain order here is a parameter):
 * segments flow down the chain 0 -> 1 -> ... -> P-1 being reduced, then back to the front.
 *
 * Worked example, P = 3, 3 segments d0 d1 d2 ("+" = received and reduced, "=" = received
 * and kept; one row per tau, the time to move and reduce one segment):
 *
 *   reduce loop                      override loop
 *   t1  0 -d0-> 1+
 *   t2  0 -d1-> 1+  1 -d0-> 2+
 *   t3  0 -d2-> 1+  1 -d1-> 2+      2 -d0-> 0=
 *   t4              1 -d2-> 2+      2 -d1-> 0=  0 -d0-> 1=
 *   t5                              2 -d2-> 0=  0 -d1-> 1=
 *   t6                                          0 -d2-> 1=
 *
 * Position P-1 finishes each segment and sends it on to position 0 ((id + 1) mod P), which
 * passes it down to P-2 (P-1 already has it).
 *
 * Choices. Fig. 5 prints line 6 (send_segment) inside "if id != 0", which would leave
 * position 0's data unsent and the pipe empty; position 0 sends its own segments, unreduced,
 * as the linear tree of Table 1 and Fig. 6 do. Each receiver reduces with the received
 * partial result on the left (SCHED_SOURCE_LEFT: dst = received op mine), so the result is
 * ((x0 op x1) op x2) ...: chain order, hence rank order for linear_tree, and correct for
 * non-commutative ops. The schedule copies send -> recv first and never reads the send
 * buffer again (safe with MPI_IN_PLACE). Segments follow sched_block_start's near-equal
 * split; with count < segments some are empty and still sent, so both sides agree.
 * Scratch: 2 slots of the largest segment (ceil(count/segments)), so a receive overlaps the
 * previous reduction; position 0 needs none. Message m on a link carries tag m mod 4 and
 * waits for message m - 4 there: same-tag messages are ordered, up to 4 in flight.
 */
#include "linear_tree.h"

#include <stdlib.h>

#include "parts/rank_order.h"
#include "parts/tag_window.h"

enum {
    LINEAR_TREE_SLOTS = 2,       /* one receive overlaps one reduction */
    LINEAR_TREE_TAG_WINDOW = 4,  /* messages in flight per link (parts/tag_window.h) */
};

int linear_tree_build_with_order(int32_t ranks, int32_t rank, int64_t count,
                                 const int32_t *order, int32_t segments, papcoll_schedule *out) {
    int32_t position = rank_order_position(ranks, rank, order, out);
    if (position < 0) return sched_finish(out);
    if (segments < 0)
        return sched_fail(out, PAPCOLL_ERR_ARGUMENT, "segment count must not be negative");
    /* A segment holds at least one element: more segments than elements is a parameter that
     * asks for empty messages, refused. count 0 has nothing to cut and lets any count pass,
     * so a communicator's segment_count does not break its empty calls. The default, P
     * segments, may exceed a small count: those empty segments are the paper's choice. */
    if (segments > 0 && count > 0 && segments > count)
        return sched_fail(out, PAPCOLL_ERR_ARGUMENT,
                          "segment_count %d is more than the %lld elements of the vector: a "
                          "segment holds at least one element", segments, (long long)count);
    if (segments == 0) segments = ranks; /* Proficz 2018, Sect. 4.1: "we assume P segments" */
    int32_t copied = sched_copy_own_vector(out);
    if (ranks == 1) return sched_finish(out);

    int32_t next_position = (position + 1) % ranks;
    int32_t previous_position = (position + ranks - 1) % ranks;
    /* Position 0's previous is P-1, which sends it the final segments: one link serves both
     * the reduce loop (positions 1..P-1) and the override loop (position 0). */
    tag_window_link to_next =
        tag_window_open(order ? order[next_position] : next_position, LINEAR_TREE_TAG_WINDOW);
    tag_window_link from_previous = tag_window_open(
        order ? order[previous_position] : previous_position, LINEAR_TREE_TAG_WINDOW);

    /* The reduce loop's send of segment j reads recv[j]; the override loop's receive of
     * segment j overwrites it, so it waits for that send. */
    int32_t *reduce_loop_sends = malloc((size_t)segments * sizeof *reduce_loop_sends);
    if (reduce_loop_sends == NULL)
        return sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory building the linear tree");

    if (position == 0) {
        for (int32_t j = 0; j < segments; j++)
            reduce_loop_sends[j] = tag_window_send(
                out, &to_next,
                SCHED_RECV_REGION(sched_block_start(count, segments, j),
                                  sched_block_length(count, segments, j)),
                copied);
    } else {
        int64_t largest_segment = sched_block_length(count, segments, 0);
        int32_t slot_buffers[LINEAR_TREE_SLOTS];
        int32_t slot_last_reader[LINEAR_TREE_SLOTS];
        for (int32_t s = 0; s < LINEAR_TREE_SLOTS; s++) {
            slot_buffers[s] = sched_add_scratch(out, largest_segment);
            slot_last_reader[s] = SCHED_NONE;
        }
        for (int32_t j = 0; j < segments; j++) {
            int64_t start = sched_block_start(count, segments, j);
            int64_t length = sched_block_length(count, segments, j);
            int32_t slot = j % LINEAR_TREE_SLOTS;
            sched_region landing = sched_region_of(slot_buffers[slot], 0, length);
            int32_t received = tag_window_recv(out, &from_previous, landing, slot_last_reader[slot]);
            /* received (x_order[0] op ... op x_order[position-1]) on the left of mine */
            int32_t reduced = sched_reduce(out, landing, SCHED_RECV_REGION(start, length),
                                           SCHED_SOURCE_LEFT, SCHED_AFTER(received, copied));
            slot_last_reader[slot] = reduced;
            /* From P-1 this goes to position 0: the first step of the override loop. */
            reduce_loop_sends[j] =
                tag_window_send(out, &to_next, SCHED_RECV_REGION(start, length), reduced);
        }
    }

    if (position != ranks - 1) {
        for (int32_t j = 0; j < segments; j++) {
            sched_region segment = SCHED_RECV_REGION(sched_block_start(count, segments, j),
                                                     sched_block_length(count, segments, j));
            int32_t final_segment =
                tag_window_recv(out, &from_previous, segment, reduce_loop_sends[j]);
            /* P-1 holds the result already, so the override stops at P-2. */
            if (position < ranks - 2) tag_window_send(out, &to_next, segment, final_segment);
        }
    }
    free(reduce_loop_sends);
    return sched_finish(out);
}

static int linear_tree_build(int32_t ranks, int32_t rank, int64_t count, int32_t elem_size,
                             const papcoll_context *context, papcoll_schedule *out) {
    (void)elem_size;
    return linear_tree_build_with_order(ranks, rank, count, NULL,
                                        context->parameters.segment_count, out);
}

const algorithm_entry linear_tree_algorithm = {
    .info = {
        .name = "linear_tree",
        .description =
            "pipeline segments down the chain 0 -> 1 -> ... -> P-1 reducing, then back to all "
            "ranks",
        .source =
            "Proficz 2018 Table 1 (segmented linear tree, Open MPI) in the form of its Fig. 5",
        .limitations =
            "none; segment_count (0 = P) sets the segments; scratch 2 x ceil(count/segments) "
            "except rank 0; segments + 2P - 3 steps, so latency grows with P",
        .canonical_order = 1, /* the chain in rank order folds ((x0 op x1) op x2) ... */
    },
    .build = linear_tree_build,
};
