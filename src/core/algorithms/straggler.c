/* straggler.c - the straggler all-reduce: the on-time ranks (the *core*) combine what they
 * hold while the late ranks still compute, so that when the last rank arrives only about
 * one transfer of the vector is left. The limit it aims at is Proficz 2018's (Sect. 3)
 * e-bar_lo = mean over ranks of (a_last - a_i) + delta. Ideas from StragglAR (arXiv
 * 2505.23523: the on-time ranks reduce-scatter during the delay) and Marendic et al.
 * (J. Supercomputing 2016: schedules from known arrival times); the schedule is our own.
 *
 * Who is late. The ranks sorted by predicted arrival s_0 <= ... <= s_{P-1} (ties by rank).
 * For m = 0 .. P-1 late ranks (the last m) and Q = P - m core ranks, in units of
 * b = P x tau / Q (the time to move and reduce one core block, tau being the context's time
 * for one P-th of the vector), the predicted finish is
 *   ready  = s_{Q-1} + (Q - 1) b                        the core's reduce-scatter
 *   x      = ready; for each late rank t: x = max(x, s_{Q-1+t}) + b   its hand-off
 *   T(m)   = x + (m + Q - 1) b                           the finals go out
 * and m minimises T (ties: the smaller m). For large vectors the finals may instead go down
 * a relay chain (step 4 below) of the r late ranks predicted at least P tau / 10 before the
 * last one: the core then sends r blocks fewer and the chain's hop costs about one, so
 *   T(m, r) = x + (m + Q - 1 - r + 1) b,
 * and (m, r) with r in {0, all candidates} minimises it (ties: no chain; one relay never
 * pays, so a chain has at least two). With even arrivals m = 0: the core is everyone
 * and the schedule is the plain ring (large, ring.c) or recursive doubling (small). The
 * core runs in rank order, the late ranks in predicted arrival order.
 *
 * Large vectors (count x elem_size x (P-1) > 64 KiB and count >= P): the vector is cut
 * into Q blocks, each block into k chunks (segment_count, default: block bytes / 4 KiB,
 * clamped to 1..8: more chunks fill the pipeline faster, which the simulator rewards all
 * the way to 16, but every chunk is a message, and on shared memory with ranks sharing
 * cores 16 measured slower than 1..4; 8 is between).
 *   1. core: ring reduce-scatter among the Q core ranks (core position i ends with the
 *      core's partial of block i), while the late ranks compute;
 *   2. each late rank, on arrival and once core position i's one-element "ready" is in,
 *      sends chunk c of block i to core position i (all blocks at once: one vector out,
 *      spread over Q receivers); core i reduces it into its block, late ranks in
 *      predicted order (a wrong order only waits, it stays correct);
 *   3. core i sends each final chunk of block i straight to every other rank, starting
 *      with its right-hand neighbour, so the P - 1 senders of a round reach P - 1
 *      different receivers. After the last arrival: ~ one vector in and one out per rank.
 *   4. relays: with many late ranks the core's (P - 1) / Q vectors of finals are
 *      what is left after the last arrival, while a late rank that came well before the
 *      last has handed off and sits idle. So late position t < r forwards every final
 *      chunk it receives to late position t + 1, which then gets none from the core:
 *      core -> late 0 -> late 1 -> ... -> late r. The forwarded bits are the core's, so
 *      results stay identical; a relay that comes later than predicted only holds up those
 *      after it in the chain. In the simulator (ethernet-1g, infiniband-fdr, P 4..16,
 *      64 KiB..16 MiB) rand-late's excess over e-bar_lo fell by up to 64 % and nowhere rose
 *      by more than 5 %; two ranks late together or one after the other stayed as they were.
 * Worked example, P = 4, rank 3 late (m = 1, core 0 1 2, blocks B0 B1 B2, one chunk;
 * "+" reduced, "=" kept):
 *   during the delay   0 -B2-> 1+   1 -B0-> 2+   2 -B1-> 0+        (reduce-scatter)
 *                      0 -B1-> 1+   1 -B2-> 2+   2 -B0-> 0+        (i holds core Bi)
 *                      0 -r-> 3     1 -r-> 3     2 -r-> 3          ("ready", waits in 3)
 *   rank 3 arrives     3 -B0-> 0+   3 -B1-> 1+   3 -B2-> 2+        (Bi final at i)
 *                      0 -B0-> 1=   1 -B1-> 2=   2 -B2-> 3=        (finals, staggered)
 *                      0 -B0-> 2=   1 -B1-> 3=   2 -B2-> 0=
 *                      0 -B0-> 3=   1 -B1-> 0=   2 -B2-> 1=
 *
 * Small vectors (latency-bound): O(1) rounds after the last arrival.
 *   1. core: recursive doubling among the core (every core rank holds the core's sum);
 *   2. late rank t < m-1 sends its vector to the leader (core position 0), which reduces
 *      them in predicted order into P' and sends P' to every other rank (to the last late
 *      rank only when m = 1, the core holding it already); these small messages go eagerly
 *      and wait in the last late rank's queue before it arrives;
 *   3. the last late rank sends its vector to every other rank; every rank computes
 *      P' (op) v_last itself, with the same operands in the same roles: one message after
 *      the last arrival.
 *   P = 4, rank 3 late:  recursive doubling among 0, 1, 2 first (MPICH's fold for 3);
 *                        0 -P'-> 3 (waits in 3's queue);  3 -v3-> 0, 1, 2;  all: P' + v3.
 *
 * Choices: every block's final is made on one rank (large) or computed from identical
 * operands (small), so all ranks hold bitwise identical results. Operands are combined in
 * different orders in different blocks: commutative ops only. Wrong predictions change
 * only who waits, never the result; the cost of a wrongly predicted late rank is measured
 * in docs/benchmarks.md. Tags: core ring 0..3 (one windowed link each way), hand-off
 * 4 + c, finals 4 + k + c (a relay forwards chunk c of every block on that tag too, each
 * after the one before, the order its receiver posts them in), a core rank's one-element
 * "ready" to a late rank 4 + 2k (sent when its reduce-scatter is done; the late rank sends
 * to it only after it, so a late rank that comes early does not slow the reduce-scatter);
 * small mode 0..2 and recursive doubling
 * from 16. Scratch: large 2 core blocks (ring slots) + m blocks (one landing per late
 * rank); small: m vectors at the leader (m - 1 landings and the last late rank's), one
 * elsewhere.
 */
#include <math.h>
#include <stdlib.h>

#include "../schedule.h"
#include "parts/arrival_order.h"
#include "parts/compose.h"
#include "parts/ring_phases.h"
#include "parts/single_rank.h"
#include "ring.h"

enum {
    CORE_RING_WINDOW = 4,
    RING_SLOTS = 2,
    HANDOFF_TAG = 4,          /* large: + chunk; finals follow at HANDOFF_TAG + k */
    MOST_CHUNKS = 16000,      /* keeps every tag (up to 4 + 2k) below SCHED_MAX_TAG */
    SMALL_TO_LEADER_TAG = 0,  /* small mode: an earlier late rank's vector to the leader */
    SMALL_PARTIAL_TAG = 1,    /* the leader's P' */
    SMALL_LAST_TAG = 2,       /* the last late rank's vector */
    SMALL_CORE_TAG_BASE = 16, /* recursive doubling among the core */
    DEFAULT_CHUNK_BYTES = 4 * 1024,
    DEFAULT_MOST_CHUNKS = 8,
};

typedef struct straggler_layout {
    int32_t ranks, core_count, late_count;
    int32_t *core; /* core ranks, in rank order */
    int32_t *late; /* late ranks, in predicted arrival order */
    int32_t *late_position_of; /* of every rank, -1 for core ranks */
    int32_t core_position, late_position; /* of this rank, -1 if not there */
    int32_t relay_count; /* late positions 0 .. relay_count - 1 forward the finals to t + 1 */
} straggler_layout;

/* Whether `rank` gets its finals from the late rank before it rather than from the core. */
static int fed_by_relay(const straggler_layout *layout, int32_t rank) {
    int32_t t = layout->late_position_of[rank];
    return t >= 1 && t <= layout->relay_count;
}

/* Splits the ranks into core and late from the context's predictions. 0 on failure. */
static int layout_ranks(int32_t ranks, int32_t rank, const papcoll_context *context,
                        int relays_allowed, straggler_layout *layout, papcoll_schedule *out) {
    int32_t *order = malloc((size_t)ranks * sizeof *order);
    double *sorted = malloc((size_t)ranks * sizeof *sorted);
    layout->core = malloc((size_t)ranks * sizeof *layout->core);
    layout->late = malloc((size_t)ranks * sizeof *layout->late);
    layout->late_position_of = malloc((size_t)ranks * sizeof *layout->late_position_of);
    int ok = order && sorted && layout->core && layout->late && layout->late_position_of;
    if (!ok) sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory laying out straggler");
    if (ok && !(isfinite(context->tau) && context->tau > 0)) {
        sched_fail(out, PAPCOLL_ERR_ARGUMENT, "straggler needs tau > 0 (got %g)",
                   context->tau);
        ok = 0;
    }
    if (ok) ok = arrival_order(context, ranks, "straggler", order, sorted, out);
    if (ok) {
        layout->ranks = ranks;
        layout->relay_count = 0;
        layout->late_count =
            relays_allowed ? late_rank_layout(sorted, ranks, context->tau, &layout->relay_count)
                           : late_rank_count(sorted, ranks, context->tau);
        layout->core_count = ranks - layout->late_count;
        layout->core_position = layout->late_position = -1;
        for (int32_t r = 0; r < ranks; r++) layout->late_position_of[r] = -1;
        for (int32_t t = 0; t < layout->late_count; t++) {
            layout->late[t] = order[layout->core_count + t];
            layout->late_position_of[layout->late[t]] = t;
        }
        layout->late_position = layout->late_position_of[rank];
        int32_t position = 0;
        for (int32_t r = 0; r < ranks; r++) {
            if (layout->late_position_of[r] >= 0) continue;
            if (r == rank) layout->core_position = position;
            layout->core[position++] = r;
        }
    }
    free(order);
    free(sorted);
    return ok;
}

static void layout_release(straggler_layout *layout) {
    free(layout->core);
    free(layout->late);
    free(layout->late_position_of);
}

/* ---- large vectors ----------------------------------------------------------------------- */

typedef struct chunking {
    int64_t count;
    int32_t blocks; /* Q */
    int32_t chunks; /* k per block */
} chunking;

static sched_region chunk_of(const chunking *c, int32_t buffer, int32_t block, int32_t chunk) {
    int64_t block_start = sched_block_start(c->count, c->blocks, block);
    int64_t block_length = sched_block_length(c->count, c->blocks, block);
    return sched_region_of(buffer, block_start + sched_block_start(block_length, c->chunks, chunk),
                           sched_block_length(block_length, c->chunks, chunk));
}

/* The same chunk, at the start of a landing area of one block. */
static sched_region chunk_in_landing(const chunking *c, int32_t buffer, int64_t landing_offset,
                                     int32_t block, int32_t chunk) {
    int64_t block_length = sched_block_length(c->count, c->blocks, block);
    return sched_region_of(buffer,
                           landing_offset + sched_block_start(block_length, c->chunks, chunk),
                           sched_block_length(block_length, c->chunks, chunk));
}

static void build_late_rank_large(const straggler_layout *layout, const chunking *c,
                                  papcoll_schedule *out) {
    int32_t final_tag = HANDOFF_TAG + c->chunks, ready_tag = HANDOFF_TAG + 2 * c->chunks;
    int32_t t = layout->late_position;
    int from_relay = t >= 1 && t - 1 < layout->relay_count;
    int to_relay = t < layout->relay_count && t + 1 < layout->late_count;
    /* One chunk in flight per core rank: the next leaves when the last is through, so the
     * Q links share this rank's NIC and no link books a receiver far ahead. "Through" means
     * delivered, not buffered: the chunks are PACED (schedule.h), or eager ones would all
     * leave at once and arrive together at the end, the pipeline lost (SMPI, P = 64,
     * 1 MiB, 4 KiB chunks: 29.2 ms against 23.4 paced) */
    int32_t *previous = malloc((size_t)layout->core_count * sizeof *previous);
    if (previous == NULL) {
        sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory building straggler");
        return;
    }
    /* core rank i's one-element "ready": sent when its reduce-scatter is done, so it waits in
     * this rank's queue when this rank arrives late (the case the schedule is for); coming
     * early, this rank holds its vector back instead of slowing that work */
    int32_t tokens = sched_add_scratch(out, layout->core_count);
    for (int32_t i = 0; i < layout->core_count; i++)
        previous[i] = sched_recv(out, layout->core[i], ready_tag,
                                 sched_region_of(tokens, i, 1), SCHED_FIRST);
    for (int32_t chunk = 0; chunk < c->chunks; chunk++) {
        /* a relay's messages of one chunk share a tag: each waits for the one before */
        int32_t relayed_in = SCHED_NONE, relayed_out = SCHED_NONE;
        for (int32_t i = 0; i < layout->core_count; i++) {
            sched_region region = chunk_of(c, SCHED_RECV_BUFFER, i, chunk);
            /* paced: with eager chunks the next would otherwise leave at once (above) */
            int32_t sent = sched_pace(
                out, sched_send(out, layout->core[i], HANDOFF_TAG + chunk,
                                chunk_of(c, SCHED_SEND_BUFFER, i, chunk),
                                SCHED_AFTER(previous[i])));
            previous[i] = sent;
            /* MPI_IN_PLACE: the final lands where the send reads */
            int32_t final = sched_recv(out, from_relay ? layout->late[t - 1] : layout->core[i],
                                       final_tag + chunk, region, SCHED_AFTER(sent, relayed_in));
            if (from_relay) relayed_in = final;
            if (to_relay)
                relayed_out = sched_send(out, layout->late[t + 1], final_tag + chunk, region,
                                         SCHED_AFTER(final, relayed_out));
        }
    }
    free(previous);
}

static int build_core_rank_large(const straggler_layout *layout, const chunking *c,
                                 papcoll_schedule *out) {
    int32_t q = layout->core_count, position = layout->core_position;
    int32_t final_tag = HANDOFF_TAG + c->chunks;
    /* the "ready" message's element (any written element will do; copied before the
     * send buffer, which MPI_IN_PLACE makes the receive buffer, is written) */
    int32_t token = layout->late_count > 0 ? sched_add_scratch(out, 1) : SCHED_NONE;
    int32_t token_copied = layout->late_count > 0
                               ? sched_copy(out, SCHED_SEND_REGION(0, 1),
                                            sched_region_of(token, 0, 1), SCHED_FIRST)
                               : SCHED_NONE;
    int32_t copied = sched_copy(out, SCHED_SEND_REGION(0, c->count),
                                SCHED_RECV_REGION(0, c->count), SCHED_AFTER(token_copied));
    /* 1. ring reduce-scatter among the core (position i ends with block i) */
    ring_phases ring;
    if (!ring_phases_open(&ring, layout->core, q, position, c->count, 0, copied, out))
        return sched_finish(out);
    int32_t *ready = malloc((size_t)c->chunks * sizeof *ready);
    if (ready == NULL) {
        ring_phases_close(&ring);
        return sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory building straggler");
    }
    int32_t block_ready = ring_reduce_scatter(&ring, RING_SLOTS, CORE_RING_WINDOW, out);
    /* 2. the late ranks' hand-off into block `position`, in predicted arrival order */
    int32_t landing_buffer =
        layout->late_count > 0
            ? sched_add_scratch(out, (int64_t)layout->late_count *
                                         sched_block_length(c->count, q, position))
            : SCHED_NONE;
    int64_t own_length = sched_block_length(c->count, q, position);
    for (int32_t chunk = 0; chunk < c->chunks; chunk++) ready[chunk] = block_ready;
    /* "ready" to every late rank (build_late_rank_large) */
    for (int32_t t = 0; t < layout->late_count; t++)
        sched_send(out, layout->late[t], HANDOFF_TAG + 2 * c->chunks,
                   sched_region_of(token, 0, 1), SCHED_AFTER(block_ready, token_copied));
    for (int32_t t = 0; t < layout->late_count; t++)
        for (int32_t chunk = 0; chunk < c->chunks; chunk++) {
            sched_region landing =
                chunk_in_landing(c, landing_buffer, (int64_t)t * own_length, position, chunk);
            /* posted once the reduce-scatter is done: a large hand-off then waits for it
             * (rendezvous) instead of competing with it for this rank's link */
            int32_t received = sched_recv(out, layout->late[t], HANDOFF_TAG + chunk, landing,
                                          SCHED_AFTER(block_ready));
            ready[chunk] = sched_reduce(out, landing,
                                        chunk_of(c, SCHED_RECV_BUFFER, position, chunk),
                                        SCHED_SOURCE_LEFT, SCHED_AFTER(received, ready[chunk]));
        }
    /* 3. each final chunk of block `position` to every other rank at once; the other
     * blocks' finals come straight from their core ranks (one hop, no pipeline to fill) */
    int32_t me = layout->core[position];
    for (int32_t chunk = 0; chunk < c->chunks; chunk++) {
        /* each rank starts with its right-hand neighbour, so the P - 1 senders of a round
         * reach P - 1 different receivers instead of all queueing at rank 0 */
        for (int32_t step = 1; step < layout->ranks; step++) {
            int32_t to = (me + step) % layout->ranks;
            if (!fed_by_relay(layout, to)) /* a relay forwards it; paced as the hand-off */
                sched_pace(out, sched_send(out, to, final_tag + chunk,
                                           chunk_of(c, SCHED_RECV_BUFFER, position, chunk),
                                           SCHED_AFTER(ready[chunk])));
        }
        for (int32_t j = 0; j < q; j++)
            if (j != position)
                sched_recv(out, layout->core[j], final_tag + chunk,
                           chunk_of(c, SCHED_RECV_BUFFER, j, chunk),
                           SCHED_AFTER(ring_phases_block_free(&ring, j)));
    }
    free(ready);
    ring_phases_close(&ring);
    return sched_finish(out);
}

static int32_t default_chunks(int64_t count, int32_t elem_size, int32_t core_count) {
    int64_t block_bytes = sched_block_length(count, core_count, 0) * elem_size;
    int64_t chunks = block_bytes / DEFAULT_CHUNK_BYTES;
    if (chunks < 1) chunks = 1;
    if (chunks > DEFAULT_MOST_CHUNKS) chunks = DEFAULT_MOST_CHUNKS;
    return (int32_t)chunks;
}

/* ---- small vectors ----------------------------------------------------------------------- */

/* Every rank but the last late one: P' is in the receive buffer once the ops `after` are
 * done; the last late rank's vector lands in scratch and is combined into it, v (op) P',
 * the operands in the roles the last late rank gives them too. Returns the status. */
static int combine_last_vector(const straggler_layout *layout, int64_t count,
                               const int32_t *after, int32_t after_count,
                               papcoll_schedule *out) {
    int32_t vector = sched_add_scratch(out, count);
    int32_t received = sched_recv(out, layout->late[layout->late_count - 1], SMALL_LAST_TAG,
                                  sched_region_of(vector, 0, count), SCHED_FIRST);
    int32_t *waits = malloc((size_t)(after_count + 1) * sizeof *waits);
    if (waits == NULL)
        return sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory building straggler");
    for (int32_t k = 0; k < after_count; k++) waits[k] = after[k];
    waits[after_count] = received;
    sched_reduce(out, sched_region_of(vector, 0, count), SCHED_RECV_REGION(0, count),
                 SCHED_SOURCE_LEFT, waits, after_count + 1);
    free(waits);
    return sched_finish(out);
}

static int build_small(const straggler_layout *layout, int64_t count, int32_t elem_size,
                       papcoll_schedule *out) {
    int32_t m = layout->late_count, leader = layout->core[0];
    int32_t last = m > 0 ? layout->late[m - 1] : -1;
    if (layout->core_position >= 0) {
        int32_t copied = sched_copy(out, SCHED_SEND_REGION(0, count),
                                    SCHED_RECV_REGION(0, count), SCHED_FIRST);
        int32_t have = compose_embed(out, "recursive_doubling", layout->core,
                                     layout->core_count, layout->core_position, count,
                                     elem_size, SMALL_CORE_TAG_BASE, SCHED_MAX_TAG,
                                     SCHED_AFTER(copied));
        if (m == 0) return sched_finish(out);
        if (layout->core_position == 0) { /* the leader */
            int32_t landings = m > 1 ? sched_add_scratch(out, (int64_t)(m - 1) * count)
                                     : SCHED_NONE;
            for (int32_t t = 0; t < m - 1; t++) {
                sched_region landing = sched_region_of(landings, (int64_t)t * count, count);
                int32_t received =
                    sched_recv(out, layout->late[t], SMALL_TO_LEADER_TAG, landing, SCHED_FIRST);
                have = sched_reduce(out, landing, SCHED_RECV_REGION(0, count),
                                    SCHED_SOURCE_LEFT, SCHED_AFTER(received, have));
            }
            /* P' to all who need it at once (a send completes only when its receiver is
             * there: one waiting for another would hold the rest back); the reduction
             * below overwrites what they read, so it waits for all of them */
            int32_t *sends = malloc((size_t)(layout->ranks + 1) * sizeof *sends);
            if (sends == NULL)
                return sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory building straggler");
            int32_t sent = 0;
            for (int32_t r = 0; r < layout->ranks; r++)
                if (m > 1 ? r != leader : r == last)
                    sends[sent++] = sched_send(out, r, SMALL_PARTIAL_TAG,
                                               SCHED_RECV_REGION(0, count), SCHED_AFTER(have));
            sends[sent++] = have;
            int status = combine_last_vector(layout, count, sends, sent, out);
            free(sends);
            return status;
        }
        if (m > 1)
            have = sched_recv(out, leader, SMALL_PARTIAL_TAG, SCHED_RECV_REGION(0, count),
                              SCHED_AFTER(have));
        return combine_last_vector(layout, count, SCHED_AFTER(have), out);
    }
    if (layout->late_position < m - 1) { /* an earlier late rank */
        int32_t sent = sched_send(out, leader, SMALL_TO_LEADER_TAG, SCHED_SEND_REGION(0, count),
                                  SCHED_FIRST);
        /* in place, P' lands where the send reads */
        int32_t partial = sched_recv(out, leader, SMALL_PARTIAL_TAG, SCHED_RECV_REGION(0, count),
                                     SCHED_AFTER(sent));
        return combine_last_vector(layout, count, SCHED_AFTER(partial), out);
    }
    /* the last late rank: its vector to everyone; P' (op) v computed in a scratch copy of
     * P', in the roles every other rank uses, then copied once the sends are done */
    int32_t partial_buffer = sched_add_scratch(out, count);
    int32_t *sends = malloc((size_t)layout->ranks * sizeof *sends);
    if (sends == NULL)
        return sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory building straggler");
    int32_t sent_count = 0;
    for (int32_t r = 0; r < layout->ranks; r++)
        if (r != last)
            sends[sent_count++] = sched_send(out, r, SMALL_LAST_TAG, SCHED_SEND_REGION(0, count),
                                             SCHED_FIRST);
    int32_t partial = sched_recv(out, leader, SMALL_PARTIAL_TAG,
                                 sched_region_of(partial_buffer, 0, count), SCHED_FIRST);
    int32_t reduced = sched_reduce(out, SCHED_SEND_REGION(0, count),
                                   sched_region_of(partial_buffer, 0, count), SCHED_SOURCE_LEFT,
                                   SCHED_AFTER(partial));
    int32_t *after = malloc((size_t)(sent_count + 1) * sizeof *after);
    if (after == NULL) {
        free(sends);
        return sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory building straggler");
    }
    for (int32_t s = 0; s < sent_count; s++) after[s] = sends[s];
    after[sent_count] = reduced;
    sched_copy(out, sched_region_of(partial_buffer, 0, count), SCHED_RECV_REGION(0, count),
               after, sent_count + 1);
    free(after);
    free(sends);
    return sched_finish(out);
}

/* ---- the builder ------------------------------------------------------------------------- */

static int straggler_build(int32_t ranks, int32_t rank, int64_t count, int32_t elem_size,
                           const papcoll_context *context, papcoll_schedule *out) {
    straggler_layout layout = {0};
    if (!layout_ranks(ranks, rank, context, !latency_bound_vector(count, elem_size, ranks),
                      &layout, out)) {
        layout_release(&layout);
        return sched_finish(out);
    }
    if (single_rank_copy(ranks, out)) {
        layout_release(&layout);
        return sched_finish(out);
    }
    int status;
    if (latency_bound_vector(count, elem_size, ranks)) {
        status = build_small(&layout, count, elem_size, out);
    } else {
        int32_t chunks = context->parameters.segment_count > 0
                             ? context->parameters.segment_count
                             : default_chunks(count, elem_size, layout.core_count);
        /* every chunk of every block is a message from every core rank to every rank */
        int32_t most = PAPCOLL_MAX_SEGMENTS / ranks < MOST_CHUNKS ? PAPCOLL_MAX_SEGMENTS / ranks
                                                                  : MOST_CHUNKS;
        if (chunks > most) {
            layout_release(&layout);
            return sched_fail(out, PAPCOLL_ERR_LIMIT,
                              "straggler: segment_count %d is more than the %d chunks a block "
                              "may have at P = %d (at most 16000, and at most %d / P)",
                              chunks, most, ranks, PAPCOLL_MAX_SEGMENTS);
        }
        chunking c = {count, layout.core_count, chunks};
        if (layout.late_count == 0) { /* nobody late: the plain ring, in rank order */
            status = ring_build_with_order(ranks, rank, count, NULL, 0, out);
        } else if (layout.late_position >= 0) {
            build_late_rank_large(&layout, &c, out);
            status = sched_finish(out);
        } else {
            status = build_core_rank_large(&layout, &c, out);
        }
    }
    layout_release(&layout);
    return status;
}

const algorithm_entry straggler_algorithm = {
    .info = {
        .name = "straggler",
        .description =
            "on-time ranks combine while late ones compute; about one transfer after the last "
            "arrival",
        .source = "papcoll's own (ideas of StragglAR, arXiv 2505.23523, and Marendic et al. "
                  "2016); the limit of Proficz 2018 S3",
        .limitations =
            "commutative ops only; needs one arrival estimate per rank and tau > 0, identical "
            "on all ranks; scratch up to (m + 2) x count / (P - m) (m late ranks) or m x "
            "count for small vectors; segment_count (chunks a block) at most 16000",
        .commutative_only = 1,
        .needs_arrivals = 1,
    },
    .build = straggler_build,
};
