/* prr.c - pre-reduced ring, PRR (Proficz 2018, Sect. 4.2, Fig. 7 and Fig. 8b). The ring's P segments
 * each travel once around the ranks sorted by predicted arrival (earliest first, ties by
 * rank) being reduced, then once more being copied ("override"). What PRR changes is where
 * each segment starts: segments that would wait for the late processes start instead at
 * early ones, which reduce them among themselves ("pre-steps") before the late ones come.
 *
 * Fig. 7, positions i = 0..P-1 in arrival order with arrivals a_i, tau = time to move and
 * reduce one segment:
 *   lines 1-6   k_{P-1} = 0; for i = P-2 .. 0: k_i = k_{i+1} + 1 if
 *               a_{P-1} - a_{i+1} >= (k_{i+1} + 1) tau, else k_{i+1}       (pre-steps)
 *   lines 7-13  sp_j = the first position i with i + k_i >= j (segment j starts there),
 *               rp_j = sp_j - 1 mod P (where segment j is reduced the last time)
 *   lines 15-27 segment j: sp_j -> sp_j+1 -> ... -> rp_j reducing, then
 *               rp_j -> rp_j+1 -> ... -> rp_j-1 overriding.
 *
 * Worked example (Fig. 8b), P = 4, the rank at position 3 late by 2 tau: k = (2, 1, 0, 0),
 * sp = (0, 0, 0, 3), rp = (3, 3, 3, 2). Segments 0, 1, 2 all start at position 0 and end at
 * the late position 3; only segment 3 starts there ("+" reduced, "=" kept; rows are tau):
 *
 *   t1  0 -d2-> 1+                              (position 3 still computing)
 *   t2  0 -d1-> 1+  1 -d2-> 2+
 *   t3  0 -d0-> 1+  1 -d1-> 2+  2 -d2-> 3+  3 -d3-> 0+
 *   t4  0 -d3-> 1+  1 -d0-> 2+  2 -d1-> 3+  3 -d2-> 0=           d2 final at 3
 *   ...             each final goes on around the ring; d3 is final at 2 after 1 -d3-> 2+
 * In the plain ring every segment needs position 3 twice before the others can finish.
 *
 * Choices, where Fig. 7 is ambiguous or wrong:
 * - Line 11 ("else i := i + 1") leaves sp_j unset; we read lines 8-12 as "advance i until
 *   i + k_i >= j, then sp_j = i" (the only reading that gives every segment a start).
 * - Line 19 reads "(rp_si + P - 1) mod P != is"; taken literally the penultimate holder of a
 *   segment would not pass it on and the segment would never be complete. We send on
 *   unless this position is rp_si (the last reducer), which then starts the override.
 * - The override loop (lines 22-27) starts from si = id + k_id, which makes a rank wait for
 *   a segment its left neighbour finishes last before forwarding the one it finished
 *   itself: a cycle of blocking receives. Here the schedule is a DAG: every reduce receive
 *   is posted at once (each segment lands in its own scratch area) and every send waits for
 *   its data and for this rank's previous send to the same neighbour (sched_order_sends:
 *   one message at a time per link, so a pipeline's first segment is not delivered last).
 *   The sends are therefore emitted in the order they become ready: reductions by the hops
 *   a segment has made when it reaches this position, then finals by the hops they have
 *   travelled from their last reducer. Fig. 7's override order (si = id + k_id first)
 *   would deadlock under that rule.
 * - Fig. 8 claims 7 tau against the ring's 8 tau. We cannot reproduce it: in a one-way ring
 *   the late process must send at least one message per segment (its contribution or the
 *   final), P messages over one link, and the last must still reach P-2 ranks, so no
 *   one-way ring ends before a_late + (2P - 2) tau = 8 tau (a simulation of this schedule in
 *   the tau model also gives 8); straggler.c leaves the ring to get under it. The gain PRR has in practice comes from the pre-reduced
 *   segments waiting for the late rank when it arrives (docs/algorithms.md).
 * Messages carry tag j (reduce) or P + j (override), so they match whatever order they
 * travel in; hence P <= 16384. Scratch: count elements (one landing area per segment). The
 * reduction order differs per segment: commutative ops only. Wrong arrival estimates only
 * move the segment starts, which the schedule is correct for whatever they are.
 */
#include <math.h>
#include <stdlib.h>

#include "parts/arrival_order.h"

/* Lines 1-13 of Fig. 7: pre-steps k and segment starts sp from the sorted arrivals. */
static void plan_segments(int32_t ranks, const double *arrival, double tau, int32_t *steps,
                          int32_t *start) {
    steps[ranks - 1] = 0;
    for (int32_t i = ranks - 2; i >= 0; i--)
        steps[i] = arrival[ranks - 1] - arrival[i + 1] >= (steps[i + 1] + 1) * tau
                       ? steps[i + 1] + 1
                       : steps[i + 1];
    int32_t i = 0;
    for (int32_t j = 0; j < ranks; j++) {
        while (i + steps[i] < j) i++;
        start[j] = i;
    }
}

static int prr_build(int32_t ranks, int32_t rank, int64_t count, int32_t elem_size,
                     const papcoll_context *context, papcoll_schedule *out) {
    (void)elem_size;
    if (!(context->tau > 0) || !isfinite(context->tau))
        return sched_fail(out, PAPCOLL_ERR_ARGUMENT,
                          "prr needs tau, the time to move and reduce one segment, as a "
                          "positive number of seconds (got %g)",
                          context->tau);
    if (ranks > (SCHED_MAX_TAG + 1) / 2)
        return sched_fail(out, PAPCOLL_ERR_LIMIT,
                          "prr tags each segment's messages: at most %d ranks, not %d",
                          (SCHED_MAX_TAG + 1) / 2, ranks);
    int32_t *order = malloc((size_t)ranks * sizeof *order);
    double *arrival = malloc((size_t)ranks * sizeof *arrival);
    int32_t *steps = malloc((size_t)ranks * sizeof *steps);
    int32_t *start = malloc((size_t)ranks * sizeof *start);
    if (!order || !arrival || !steps || !start) {
        sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory in prr");
    } else if (arrival_order(context, ranks, "prr", order, arrival, out)) {
        plan_segments(ranks, arrival, context->tau, steps, start);
        int32_t position = 0;
        while (order[position] != rank) position++;
        int32_t right = order[(position + 1) % ranks];
        int32_t left = order[(position + ranks - 1) % ranks];

        int32_t copied = sched_copy(out, SCHED_SEND_REGION(0, count),
                                    SCHED_RECV_REGION(0, count), SCHED_FIRST);
        int32_t landing = ranks > 1 ? sched_add_scratch(out, count) : SCHED_NONE;
        /* Segments in the order they reach this position (hops from their start, ties by
         * segment), reductions before overrides: the order this rank's sends to its right
         * neighbour become ready, which is the order sched_order_sends keeps them in. */
        int32_t *final_segment = malloc((size_t)ranks * sizeof *final_segment);
        if (final_segment == NULL) sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory in prr");
        for (int32_t hops = 0; hops < ranks && ranks > 1 && final_segment; hops++)
            for (int32_t j = 0; j < ranks; j++) {
                if ((position - start[j] + ranks) % ranks != hops) continue;
                int64_t offset = sched_block_start(count, ranks, j);
                int64_t length = sched_block_length(count, ranks, j);
                sched_region segment = SCHED_RECV_REGION(offset, length);
                int32_t last_reducer = (start[j] + ranks - 1) % ranks;
                /* reduce: receive the partial result of positions start..position-1 and
                 * put it on the left of mine, then pass it on unless it is now complete */
                int32_t reduced = copied;
                if (position != start[j]) {
                    sched_region incoming = sched_region_of(landing, offset, length);
                    int32_t received = sched_recv(out, left, j, incoming, SCHED_FIRST);
                    reduced = sched_reduce(out, incoming, segment, SCHED_SOURCE_LEFT,
                                           SCHED_AFTER(received, copied));
                }
                final_segment[j] = reduced;
                if (position != last_reducer) {
                    int32_t forwarded = sched_send(out, right, j, segment, SCHED_AFTER(reduced));
                    /* override: the final arrives from the left; it overwrites the segment
                     * the send above still reads */
                    final_segment[j] =
                        sched_recv(out, left, ranks + j, segment, SCHED_AFTER(forwarded));
                }
            }
        /* a final starts at its last reducer (hops P - 1 here) and then travels the ring:
         * this position forwards first the one it finished, then those finished 1, 2, ...
         * positions to its left */
        for (int32_t travelled = 0; travelled < ranks && ranks > 1 && final_segment; travelled++)
            for (int32_t j = 0; j < ranks; j++)
                if ((position - start[j] + 1 + ranks) % ranks == travelled &&
                    (position + 1) % ranks != (start[j] + ranks - 1) % ranks)
                    sched_send(out, right, ranks + j,
                               SCHED_RECV_REGION(sched_block_start(count, ranks, j),
                                                 sched_block_length(count, ranks, j)),
                               SCHED_AFTER(final_segment[j]));
        free(final_segment);
    }
    free(order);
    free(arrival);
    free(steps);
    free(start);
    return sched_finish(out);
}

const algorithm_entry prr_algorithm = {
    .info = {
        .name = "prr",
        .description =
            "pre-reduced ring: early ranks reduce segments among themselves before late ones "
            "arrive",
        .source = "Proficz 2018 S4.2, Fig. 7 and Fig. 8b",
        .limitations =
            "commutative ops only; needs one arrival estimate per rank and tau > 0, identical "
            "on all ranks; scratch = count elements; at most 16384 ranks",
        .commutative_only = 1,
        .needs_arrivals = 1,
    },
    .build = prr_build,
};
