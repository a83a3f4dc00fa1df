/* linear.c - basic linear all-reduce: every rank sends its vector to rank 0, which reduces
 * them one by one, then sends the result to every rank (Open MPI's "basic linear", Proficz
 * 2018, Table 1). A baseline: the root moves (P-1) x count elements each way.
 *
 * Worked example, P = 4 (x_r is rank r's vector, "op" the reduction):
 *
 *   round 1   1 --x1--> 0   2 --x2--> 0   3 --x3--> 0       (all in flight at once)
 *             0: acc = x3; acc = x2 op acc; acc = x1 op acc; acc = x0 op acc
 *   round 2   0 --acc--> 1  0 --acc--> 2  0 --acc--> 3
 *
 * The root folds from the highest rank down, always with the received vector on the left,
 * so the result is x0 op (x1 op (x2 op x3)): rank order, valid for non-commutative ops.
 * Two incoming scratch buffers alternate so one receive overlaps the previous reduction.
 * Scratch at the root: 3 x count (accumulator + two incoming); other ranks: none.
 */
#include "../schedule.h"
#include "parts/single_rank.h"

static int linear_build(int32_t ranks, int32_t rank, int64_t count, int32_t elem_size,
                        const papcoll_context *context, papcoll_schedule *out) {
    (void)elem_size;
    (void)context;
    if (single_rank_copy(ranks, out)) return sched_finish(out);
    const int32_t root = 0;
    if (rank != root) {
        int32_t sent = sched_send(out, root, 0, SCHED_SEND_REGION(0, count), SCHED_FIRST);
        /* With MPI_IN_PLACE the receive overwrites what the send reads: wait for it. */
        sched_recv(out, root, 0, SCHED_RECV_REGION(0, count), SCHED_AFTER(sent));
        return sched_finish(out);
    }
    int32_t accumulator = sched_add_scratch(out, count);
    int32_t incoming[2] = {sched_add_scratch(out, count), sched_add_scratch(out, count)};
    int32_t last_reader[2] = {SCHED_NONE, SCHED_NONE}; /* reduction that last read a slot */
    int32_t previous = sched_recv(out, ranks - 1, 0, sched_region_of(accumulator, 0, count),
                                  SCHED_FIRST);
    for (int32_t source = ranks - 2; source >= 1; source--) {
        int slot = source % 2;
        int32_t received = sched_recv(out, source, 0, sched_region_of(incoming[slot], 0, count),
                                      SCHED_AFTER(last_reader[slot]));
        previous = sched_reduce(out, sched_region_of(incoming[slot], 0, count),
                                sched_region_of(accumulator, 0, count), SCHED_SOURCE_LEFT,
                                SCHED_AFTER(received, previous));
        last_reader[slot] = previous;
    }
    int32_t folded = sched_reduce(out, SCHED_SEND_REGION(0, count),
                                  sched_region_of(accumulator, 0, count), SCHED_SOURCE_LEFT,
                                  SCHED_AFTER(previous));
    int32_t result = sched_copy(out, sched_region_of(accumulator, 0, count),
                                SCHED_RECV_REGION(0, count), SCHED_AFTER(folded));
    for (int32_t destination = 1; destination < ranks; destination++)
        sched_send(out, destination, 0, SCHED_RECV_REGION(0, count), SCHED_AFTER(result));
    return sched_finish(out);
}

const algorithm_entry linear_algorithm = {
    .info = {
        .name = "linear",
        .description = "reduce everything at rank 0, then send the result to every rank",
        .source = "Proficz 2018 Table 1 (Open MPI basic linear)",
        .limitations = "none; the root needs 3 x count scratch",
    },
    .build = linear_build,
};
