/* verify.c - the symbolic executor: runs all P schedules of an all-reduce on values that
 * record *which ranks' contributions* an element holds, and proves the schedules correct or
 * reports the first violation (rank, op index, reason). DESIGN.md, "the verifier".
 *
 * What is proved, in this order:
 *  1. regions stay inside their buffers (count elements, or the declared scratch size);
 *  2. no races: within a rank, two ops that touch overlapping elements, one of them writing,
 *     are ordered by the dependency DAG (a SEND reads and a RECV writes for as long as they
 *     are in flight). Checked with the send and receive buffers separate, then aliased
 *     (MPI_IN_PLACE);
 *  3. matching is deterministic: SENDs (RECVs) with the same peer and tag are DAG-ordered,
 *     so the k-th SEND of a channel meets its k-th RECV, whatever the timing; every SEND
 *     has a RECV of the same length and vice versa;
 *  4. no deadlock when messages above the eager limit block until their RECV is posted;
 *  5. every element of every rank's result holds every rank's contribution exactly once
 *     (a REDUCE of two values that share a contribution is reported at once), and whether
 *     operands were combined in rank order (needed for non-commutative ops).
 * It also counts bytes per rank, the bandwidth lower bound of Patarasuk & Yuan 2009, Lemma 4, and
 * the communication rounds on the critical path.
 *
 * Buffers are maps from element intervals to values, so the cost grows with the number of
 * distinct intervals, not with count: 2^20 + 3 elements cost what 1009 do.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "message.h"
#include "verifier.h"

/* ---- execution ------------------------------------------------------------------------ */

static void push_ready(verifier *v, int32_t rank, int32_t op) {
    if (verifier_grow(v, &v->worklist, &v->worklist_capacity, v->worklist_tail + 1,
             sizeof *v->worklist) != 0)
        return;
    v->worklist[v->worklist_tail++] = (worklist_item){rank, op};
}

static void complete(verifier *v, int32_t rank, int32_t op, int32_t round) {
    rank_state *state = &v->states[rank];
    state->state[op] = COMPLETED;
    state->round[op] = round;
    for (int32_t d = state->dependent_first[op]; d < state->dependent_first[op + 1]; d++) {
        int32_t dependent = state->dependents[d];
        if (--state->pending[dependent] == 0) push_ready(v, rank, dependent);
    }
}

static int is_eager(const verifier *v, const sched_op *op) {
    if (op->length == 0 || v->eager_limit < 0) return 1;
    /* length x elem_size <= limit, divided out: the product may not fit 64 bits. */
    return op->length <= v->eager_limit / v->elem_size;
}

static int check_defined(verifier *v, int32_t rank, int32_t op, const piece_list *pieces,
                         int64_t offset, int buffer) {
    int64_t at = offset;
    for (int64_t p = 0; p < pieces->count; p++) {
        if (pieces->items[p].value == UNDEFINED_VALUE) {
            char name[32];
            fail_at(v, rank, op, "%s reads %s[%" PRId64 "], which was never written",
                    kind_name(v->schedules[rank]->ops[op].kind),
                    buffer_name(buffer, name, sizeof name), at);
            return 0;
        }
        at += pieces->items[p].length;
    }
    return 1;
}

/* Delivers a matched message: the RECV's region gets the SEND's snapshot. Rounds: a message
 * takes one round, which needs both its SEND and its RECV started, so it completes at
 * max(start round of the SEND, start round of the RECV) + 1 (empty messages take no round);
 * a rendezvous SEND completes with it, an eager one at its start. A rank may have several
 * messages in flight in the same round (postal model, not the telephone model). */
static void deliver(verifier *v, int32_t recv_rank, int32_t recv_op) {
    rank_state *receiver = &v->states[recv_rank];
    const sched_op *op = &v->schedules[recv_rank]->ops[recv_op];
    int32_t sender_rank = op->u.message.peer;
    int32_t send_op = receiver->partner[recv_op];
    rank_state *sender = &v->states[sender_rank];
    map_write(v, map_of(v, recv_rank, op->buffer), op->offset,
              v->pool.items + sender->snapshot_first[send_op], sender->snapshot_count[send_op]);
    /* both hold start rounds: a SEND's round only changes when it completes, which for an
     * eager SEND is at its start and for a rendezvous one is here */
    int32_t send_round = sender->round[send_op], recv_round = receiver->round[recv_op];
    int32_t message_round = (send_round > recv_round ? send_round : recv_round) +
                            (op->length > 0 ? 1 : 0);
    if (sender->state[send_op] == STARTED) complete(v, sender_rank, send_op, message_round);
    complete(v, recv_rank, recv_op, message_round);
}

static void start(verifier *v, int32_t rank, int32_t index) {
    rank_state *state = &v->states[rank];
    const papcoll_schedule *schedule = v->schedules[rank];
    const sched_op *op = &schedule->ops[index];
    int32_t count;
    const int32_t *dependencies = sched_dependencies(schedule, index, &count);
    int32_t round = 0;
    for (int32_t d = 0; d < count; d++)
        if (state->round[dependencies[d]] > round) round = state->round[dependencies[d]];
    state->state[index] = STARTED;
    state->round[index] = round;
    switch (op->kind) {
    case SCHED_SEND: {
        if (!map_read(v, map_of(v, rank, op->buffer), op->offset, op->offset + op->length,
                      &v->scratch_a) ||
            !check_defined(v, rank, index, &v->scratch_a, op->offset, op->buffer))
            return;
        if (verifier_grow(v, &v->pool.items, &v->pool.capacity, v->pool.count + v->scratch_a.count,
                 sizeof *v->pool.items) != 0)
            return;
        state->snapshot_first[index] = v->pool.count;
        state->snapshot_count[index] = v->scratch_a.count;
        if (v->scratch_a.count > 0) /* memcpy from a NULL source is undefined even for 0 */
            memcpy(v->pool.items + v->pool.count, v->scratch_a.items,
                   (size_t)v->scratch_a.count * sizeof *v->pool.items);
        v->pool.count += v->scratch_a.count;
        int32_t peer = op->u.message.peer, partner = state->partner[index];
        if (is_eager(v, op)) complete(v, rank, index, round);
        if (v->states[peer].state[partner] == STARTED) deliver(v, peer, partner);
        break;
    }
    case SCHED_RECV: {
        int32_t peer = op->u.message.peer, partner = state->partner[index];
        rank_state *sender = &v->states[peer];
        if (sender->state[partner] == WAITING) break; /* completes when the SEND starts */
        deliver(v, rank, index);
        break;
    }
    default: {
        if (!map_read(v, map_of(v, rank, op->buffer), op->offset, op->offset + op->length,
                      &v->scratch_a) ||
            !check_defined(v, rank, index, &v->scratch_a, op->offset, op->buffer))
            return;
        if (op->kind == SCHED_COPY) {
            map_write(v, map_of(v, rank, op->target_buffer), op->u.target_offset,
                      v->scratch_a.items, v->scratch_a.count);
            complete(v, rank, index, round);
            break;
        }
        if (!map_read(v, map_of(v, rank, op->target_buffer), op->u.target_offset,
                      op->u.target_offset + op->length, &v->scratch_b) ||
            !check_defined(v, rank, index, &v->scratch_b, op->u.target_offset,
                           op->target_buffer))
            return;
        /* Walk both piece lists together; each common stretch gets a combined value. */
        v->scratch_out.count = 0;
        int64_t a = 0, b = 0, used_a = 0, used_b = 0, element = op->u.target_offset;
        while (a < v->scratch_a.count && b < v->scratch_b.count && !v->failed) {
            int64_t left_a = v->scratch_a.items[a].length - used_a;
            int64_t left_b = v->scratch_b.items[b].length - used_b;
            int64_t stretch = left_a < left_b ? left_a : left_b;
            int32_t source = v->scratch_a.items[a].value, target = v->scratch_b.items[b].value;
            int32_t value = op->flags == SCHED_TARGET_LEFT
                                ? combine(v, target, source, rank, index, element)
                                : combine(v, source, target, rank, index, element);
            if (verifier_grow(v, &v->scratch_out.items, &v->scratch_out.capacity,
                     v->scratch_out.count + 1, sizeof *v->scratch_out.items) != 0)
                return;
            v->scratch_out.items[v->scratch_out.count++] = (piece){stretch, value};
            element += stretch;
            used_a += stretch;
            used_b += stretch;
            if (used_a == v->scratch_a.items[a].length) a++, used_a = 0;
            if (used_b == v->scratch_b.items[b].length) b++, used_b = 0;
        }
        if (v->failed) return;
        map_write(v, map_of(v, rank, op->target_buffer), op->u.target_offset,
                  v->scratch_out.items, v->scratch_out.count);
        complete(v, rank, index, round);
    }
    }
}

static int setup_rank(verifier *v, int32_t rank) {
    const papcoll_schedule *schedule = v->schedules[rank];
    rank_state *state = &v->states[rank];
    int32_t n = schedule->op_count;
    size_t slots = (size_t)n + 1;
    state->state = calloc(slots, 1);
    state->pending = calloc(slots, sizeof(int32_t));
    state->round = calloc(slots, sizeof(int32_t));
    state->partner = calloc(slots, sizeof(int32_t));
    state->snapshot_first = calloc(slots, sizeof(int64_t));
    state->snapshot_count = calloc(slots, sizeof(int64_t));
    state->dependent_first = calloc(slots + 1, sizeof(int32_t));
    state->dependents = calloc((size_t)schedule->dependency_count + 1, sizeof(int32_t));
    if (!state->state || !state->pending || !state->round || !state->partner ||
        !state->snapshot_first || !state->snapshot_count || !state->dependent_first ||
        !state->dependents)
        return 0;
    if (!sched_dependents(schedule, state->pending, state->dependent_first, state->dependents))
        return 0;
    /* Initial buffers: the send buffer holds this rank's own contribution; the receive buffer
     * holds it too with MPI_IN_PLACE, and is undefined otherwise, as is scratch. */
    int ok = 1;
    ok &= map_push(v, map_of(v, rank, SCHED_RECV_BUFFER), 0, v->count,
                   v->in_place ? 1 + rank : UNDEFINED_VALUE);
    if (!v->in_place) ok &= map_push(v, map_of(v, rank, SCHED_SEND_BUFFER), 0, v->count, 1 + rank);
    for (int32_t s = 0; s < schedule->scratch_count; s++)
        ok &= map_push(v, map_of(v, rank, SCHED_FIRST_SCRATCH + s), 0,
                       schedule->scratch_elements[s], UNDEFINED_VALUE);
    return ok;
}

static void release(verifier *v) {
    if (v->states)
        for (int32_t r = 0; r < v->ranks; r++) {
            rank_state *state = &v->states[r];
            free(state->state);
            free(state->pending);
            free(state->round);
            free(state->partner);
            free(state->snapshot_first);
            free(state->snapshot_count);
            free(state->dependent_first);
            free(state->dependents);
        }
    if (v->maps)
        for (size_t m = 0; m < (size_t)v->ranks * BUFFERS_PER_RANK; m++) map_release(&v->maps[m]);
    free(v->states);
    free(v->maps);
    free(v->bits);
    free(v->low);
    free(v->high);
    free(v->ordered);
    free(v->fold_end);
    free(v->left_operand);
    free(v->right_operand);
    free(v->pool.items);
    free(v->scratch_a.items);
    free(v->scratch_b.items);
    free(v->scratch_out.items);
    free(v->spliced);
    free(v->worklist);
}

/* One symbolic run in one buffer mode; fills report's result fields. */
static void run(verifier *v) {
    v->states = calloc((size_t)v->ranks, sizeof *v->states);
    v->maps = calloc((size_t)v->ranks * BUFFERS_PER_RANK, sizeof *v->maps);
    if (v->states == NULL || v->maps == NULL) {
        v->out_of_memory = 1;
        fail_at(v, -1, -1, "out of memory");
        return;
    }
    /* value 0 = undefined, values 1..P = the ranks' own contributions */
    new_value(v);
    for (int32_t r = 0; r < v->ranks; r++) {
        int32_t value = new_value(v);
        if (value == UNDEFINED_VALUE) return;
        v->bits[(size_t)value * v->words + r / 64] |= 1ull << (r % 64);
        v->low[value] = v->high[value] = r;
        v->ordered[value] = 1;
        v->fold_end[value] = r == 0 ? 0 : -1;
    }
    for (int32_t r = 0; r < v->ranks && !v->failed; r++)
        if (!setup_rank(v, r)) {
            v->out_of_memory = 1;
            fail_at(v, -1, -1, "out of memory");
        }
    if (v->failed) return;
    match_messages(v);
    for (int32_t r = 0; r < v->ranks && !v->failed; r++)
        for (int32_t i = 0; i < v->schedules[r]->op_count; i++)
            if (v->states[r].pending[i] == 0) push_ready(v, r, i);
    while (!v->failed && v->worklist_head < v->worklist_tail) {
        worklist_item item = v->worklist[v->worklist_head++];
        start(v, item.rank, item.op);
    }
    if (v->failed) return;
    /* Anything not completed is stuck: report the first stuck message, else the first op. */
    for (int pass = 0; pass < 2 && !v->failed; pass++)
        for (int32_t r = 0; r < v->ranks && !v->failed; r++)
            for (int32_t i = 0; i < v->schedules[r]->op_count; i++) {
                const sched_op *op = &v->schedules[r]->ops[i];
                uint8_t state = v->states[r].state[i];
                if (state == COMPLETED || (pass == 0 && state != STARTED)) continue;
                if (state == STARTED)
                    fail_at(v, r, i,
                            "deadlock: %s %s rank %d tag %d never completes (its partner, "
                            "rank %d op %d, is never posted)",
                            kind_name(op->kind), op->kind == SCHED_SEND ? "to" : "from",
                            op->u.message.peer, op->u.message.tag, op->u.message.peer,
                            v->states[r].partner[i]);
                else
                    fail_at(v, r, i, "deadlock: %s never starts", kind_name(op->kind));
                break;
            }
    if (v->failed) return;
    /* Every element of every result: every contribution, once (doubles were caught above). */
    int all_ordered = 1, all_folded = 1;
    for (int32_t r = 0; r < v->ranks && !v->failed; r++) {
        /* an all-reduce's result is the whole buffer, a reduce-scatter's the rank's block */
        const papcoll_schedule *schedule = v->schedules[r];
        if (!map_read(v, map_of(v, r, SCHED_RECV_BUFFER), schedule->result_offset,
                      schedule->result_offset + schedule->result_length, &v->scratch_a))
            return;
        int64_t element = schedule->result_offset;
        for (int64_t p = 0; p < v->scratch_a.count; p++) {
            int32_t value = v->scratch_a.items[p].value;
            if (value == UNDEFINED_VALUE) {
                fail_at(v, r, -1, "result element %" PRId64 " is never written", element);
                break;
            }
            int32_t missing = first_missing_contribution(v, value);
            if (missing >= 0)
                fail_at(v, r, -1, "result element %" PRId64 " misses the contribution of rank %d",
                        element, missing);
            if (v->failed) break;
            all_ordered &= v->ordered[value] && v->low[value] == 0 && v->high[value] == v->ranks - 1;
            if (all_folded && v->fold_end[value] != v->ranks - 1) {
                all_folded = 0;
                char why[200];
                describe_canonical_break(v, value, why, sizeof why);
                snprintf(v->report->canonical_break, sizeof v->report->canonical_break,
                         "%srank %d, result element %" PRId64 ": %s", v->mode, r, element, why);
                if (v->require_fold)
                    fail_at(v, r, -1, "not the rank-order fold (reproducible mode): result "
                            "element %" PRId64 ": %s", element, why);
            }
            element += v->scratch_a.items[p].length;
        }
    }
    if (v->failed) return;
    if (!v->in_place) {
        int32_t rounds = 0;
        for (int32_t r = 0; r < v->ranks; r++)
            for (int32_t i = 0; i < v->schedules[r]->op_count; i++)
                if (v->states[r].round[i] > rounds) rounds = v->states[r].round[i];
        v->report->rounds = rounds;
        v->report->order_preserved = all_ordered;
        v->report->canonical_order = all_folded;
    } else {
        v->report->order_preserved &= all_ordered;
        v->report->canonical_order &= all_folded;
    }
}

/* The report's byte counts are statistics: a schedule text may declare sizes whose totals
 * pass 2^63-1, and those saturate there rather than overflow. */
static int64_t saturated_add(int64_t a, int64_t b) {
    int64_t sum;
    return __builtin_add_overflow(a, b, &sum) ? INT64_MAX : sum;
}

static int64_t saturated_multiply(int64_t a, int64_t b) {
    int64_t product;
    return __builtin_mul_overflow(a, b, &product) ? INT64_MAX : product;
}

static int64_t lower_bound_elements(int32_t ranks, int64_t count) {
    /* ceil(2 (P-1) count / P) without overflow: count = quotient P + remainder */
    int64_t quotient = count / ranks, remainder = count % ranks;
    int64_t tail = 2 * (int64_t)(ranks - 1) * remainder;
    return saturated_add(saturated_multiply(2 * (int64_t)(ranks - 1), quotient),
                         (tail + ranks - 1) / ranks);
}

int papcoll_verify_schedules(papcoll_schedule *const *schedules, int32_t ranks,
                             const papcoll_verify_options *options,
                             papcoll_verify_report *report, char *error, size_t error_size) {
    if (report == NULL || schedules == NULL || ranks < 1) {
        copy_message(error, error_size, "verify needs schedules, ranks >= 1 and a report");
        return PAPCOLL_ERR_ARGUMENT;
    }
    memset(report, 0, sizeof *report);
    report->violation_rank = report->violation_op = -1;
    for (int32_t r = 0; r < ranks; r++) {
        const papcoll_schedule *s = schedules[r];
        if (s == NULL || s->ranks != ranks || s->rank != r || s->count != schedules[0]->count ||
            s->elem_size != schedules[0]->elem_size) {
            message_write(error, error_size, 0,
                          "schedule %d is missing or disagrees on ranks, rank, count or "
                          "elem_size", r);
            return PAPCOLL_ERR_ARGUMENT;
        }
    }
    papcoll_verify_options defaults = {.eager_limit_bytes = 0, .check_in_place = 1};
    if (options == NULL) options = &defaults;
    int64_t count = schedules[0]->count;
    int32_t elem_size = schedules[0]->elem_size;
    report->ok = 1;
    report->lower_bound_bytes =
        ranks > 1 ? saturated_multiply(lower_bound_elements(ranks, count), elem_size) : 0;
    for (int32_t r = 0; r < ranks; r++) {
        int64_t sent = 0, received = 0, scratch = 0;
        for (int32_t i = 0; i < schedules[r]->op_count; i++) {
            const sched_op *op = &schedules[r]->ops[i];
            int64_t bytes = saturated_multiply(op->length, elem_size);
            if (op->kind == SCHED_SEND) sent = saturated_add(sent, bytes);
            if (op->kind == SCHED_RECV) received = saturated_add(received, bytes);
        }
        for (int32_t s = 0; s < schedules[r]->scratch_count; s++)
            scratch = saturated_add(scratch, schedules[r]->scratch_elements[s]);
        report->total_bytes_sent = saturated_add(report->total_bytes_sent, sent);
        if (sent > report->max_bytes_sent) report->max_bytes_sent = sent;
        if (received > report->max_bytes_received) report->max_bytes_received = received;
        if (schedules[r]->op_count > report->max_ops) report->max_ops = schedules[r]->op_count;
        if (scratch > report->max_scratch_elements) report->max_scratch_elements = scratch;
    }
    int out_of_memory = 0;
    int32_t too_large_rank = -1;
    const char *too_large_why = "";
    int64_t search_steps = 0; /* one budget for every rank and both modes */
    for (int mode = 0; mode < (options->check_in_place ? 2 : 1) && report->ok; mode++) {
        verifier v = {0};
        v.schedules = schedules;
        v.ranks = ranks;
        v.count = count;
        v.elem_size = elem_size;
        v.words = (ranks + 63) / 64;
        v.in_place = mode;
        v.eager_limit = options->eager_limit_bytes;
        v.require_fold = options->require_canonical_order;
        v.report = report;
        v.mode = mode ? "with MPI_IN_PLACE: " : "";
        v.too_large_rank = -1;
        v.search_steps = search_steps;
        for (int32_t r = 0; r < ranks && !v.failed; r++) check_bounds(&v, r);
        for (int32_t r = 0; r < ranks && !v.failed; r++) check_ordering(&v, r, mode);
        if (!v.failed) run(&v);
        out_of_memory |= v.out_of_memory;
        search_steps = v.search_steps;
        if (v.too_large_rank >= 0) {
            too_large_rank = v.too_large_rank;
            too_large_why = v.too_large_why;
        }
        release(&v);
        if (too_large_rank >= 0) break;
    }
    if (too_large_rank >= 0)
        return message_write(error, error_size, PAPCOLL_ERR_LIMIT,
                             "rank %d's schedule is too large to check for races: %s",
                             too_large_rank, too_large_why);
    if (out_of_memory) {
        copy_message(error, error_size, "out of memory while verifying");
        return PAPCOLL_ERR_NO_MEMORY;
    }
    return PAPCOLL_OK;
}

int papcoll_verify(const char *algorithm, int32_t ranks, int64_t count, int32_t elem_size,
                   const papcoll_context *context, const papcoll_verify_options *options,
                   papcoll_verify_report *report, char *error, size_t error_size) {
    if (ranks < 1) {
        copy_message(error, error_size, "the number of ranks must be at least 1");
        return PAPCOLL_ERR_ARGUMENT;
    }
    papcoll_schedule **schedules = calloc((size_t)ranks, sizeof *schedules);
    if (schedules == NULL) {
        copy_message(error, error_size, "out of memory");
        return PAPCOLL_ERR_NO_MEMORY;
    }
    int status = PAPCOLL_OK;
    for (int32_t r = 0; r < ranks && status == PAPCOLL_OK; r++)
        status = papcoll_schedule_build(algorithm, ranks, r, count, elem_size, context,
                                        &schedules[r], error, error_size);
    if (status == PAPCOLL_OK)
        status = papcoll_verify_schedules(schedules, ranks, options, report, error, error_size);
    for (int32_t r = 0; r < ranks; r++) papcoll_schedule_free(schedules[r]);
    free(schedules);
    return status;
}
