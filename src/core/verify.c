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
 * It also counts bytes per rank, the bandwidth lower bound of seed 001 Lemma 4, and the
 * communication rounds on the critical path.
 *
 * Buffers are maps from element intervals to values, so the cost grows with the number of
 * distinct intervals, not with count: 2^20 + 3 elements cost what 1009 do.
 */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <inttypes.h>

#include "growth.h"
#include "message.h"
#include "schedule.h"

#define UNDEFINED_VALUE 0
#define BUFFERS_PER_RANK (SCHED_FIRST_SCRATCH + SCHED_MAX_SCRATCH)
/* Race analysis asks "is op a an ancestor of op b?". Up to this many ops per rank it keeps an
 * ancestor bitset per op (n^2 / 8 bytes: 8 MiB at the limit); above, it searches the DAG
 * backwards per question, which needs O(n) memory. */
#define BITSET_OPS_LIMIT 8192

enum op_state { WAITING = 0, STARTED = 1, COMPLETED = 2 };

typedef struct segment {
    int64_t start, end;
    int32_t value;
} segment;

typedef struct interval_map {
    segment *items;
    int32_t count;
    size_t capacity;
} interval_map;

typedef struct piece {
    int64_t length;
    int32_t value;
} piece;

typedef struct piece_list {
    piece *items;
    int64_t count;
    size_t capacity;
} piece_list;

/* Per-rank execution state. */
typedef struct rank_state {
    uint8_t *state;
    int32_t *pending;          /* dependencies not yet completed */
    int32_t *round;            /* round at which the op completed */
    int32_t *partner;          /* SEND/RECV: matching op index at the peer */
    int64_t *snapshot_first;   /* SEND: its data, in the shared piece pool */
    int64_t *snapshot_count;
    int32_t *dependent_first;  /* CSR of the reverse edges */
    int32_t *dependents;
} rank_state;

typedef struct worklist_item {
    int32_t rank, op;
} worklist_item;

typedef struct verifier {
    papcoll_schedule *const *schedules;
    int32_t ranks;
    int64_t count;
    int32_t elem_size;
    int32_t words;             /* 64-bit words per contribution set */
    int in_place;
    int64_t eager_limit;
    /* value pool: value v has bits[v * words ..], and, if ordered, covers ranks low..high
     * combined left to right */
    uint64_t *bits;
    int32_t *low, *high;
    uint8_t *ordered;
    int32_t value_count;
    size_t value_capacity;
    interval_map *maps;        /* ranks x BUFFERS_PER_RANK */
    rank_state *states;
    piece_list pool;           /* snapshots of sent data */
    piece_list scratch_a, scratch_b, scratch_out;
    worklist_item *worklist;
    int64_t worklist_head, worklist_tail;
    size_t worklist_capacity;
    papcoll_verify_report *report;
    const char *mode;          /* "" or "with MPI_IN_PLACE: " */
    int failed;
    int out_of_memory;
} verifier;

static void fail_at(verifier *v, int32_t rank, int32_t op, const char *format, ...)
    __attribute__((format(printf, 4, 5)));
static void fail_at(verifier *v, int32_t rank, int32_t op, const char *format, ...) {
    if (v->failed) return;
    v->failed = 1;
    v->report->ok = 0;
    v->report->violation_rank = rank;
    v->report->violation_op = op;
    char message[224];
    va_list arguments;
    va_start(arguments, format);
    message_vwrite(message, sizeof message, format, arguments);
    va_end(arguments);
    if (op >= 0)
        snprintf(v->report->reason, sizeof v->report->reason, "%.20srank %d op %d: %.200s", v->mode,
                 rank, op, message);
    else if (rank >= 0)
        snprintf(v->report->reason, sizeof v->report->reason, "%.20srank %d: %.200s", v->mode, rank,
                 message);
    else
        snprintf(v->report->reason, sizeof v->report->reason, "%.20s%.200s", v->mode, message);
}

/* grow_array, reporting a failure as the verifier's out-of-memory violation. 0 or -1. */
static int grow(verifier *v, void *items, size_t *capacity, int64_t needed, size_t item_size) {
    if (grow_array(items, capacity, (size_t)needed, item_size) == 0) return 0;
    v->out_of_memory = 1;
    fail_at(v, -1, -1, "out of memory");
    return -1;
}

/* ---- values ---------------------------------------------------------------------------- */

static int32_t new_value(verifier *v) {
    if ((size_t)v->value_count == v->value_capacity) {
        /* four arrays indexed by value: each keeps its old block on failure, so all can
         * still be freed, and the capacity only grows once all four have */
        size_t capacity = v->value_capacity ? 2 * v->value_capacity : 1024;
        if (resize_array((void **)&v->bits, capacity * (size_t)v->words, sizeof *v->bits) != 0 ||
            resize_array((void **)&v->low, capacity, sizeof *v->low) != 0 ||
            resize_array((void **)&v->high, capacity, sizeof *v->high) != 0 ||
            resize_array((void **)&v->ordered, capacity, sizeof *v->ordered) != 0) {
            v->out_of_memory = 1;
            fail_at(v, -1, -1, "out of memory");
            return UNDEFINED_VALUE;
        }
        v->value_capacity = capacity;
    }
    int32_t value = v->value_count++;
    memset(v->bits + (size_t)value * v->words, 0, (size_t)v->words * sizeof *v->bits);
    v->low[value] = v->high[value] = -1;
    v->ordered[value] = 0;
    return value;
}

static int has_contribution(const verifier *v, int32_t value, int32_t rank) {
    return (v->bits[(size_t)value * v->words + rank / 64] >> (rank % 64)) & 1;
}

/* left (op) right; reports and returns UNDEFINED_VALUE on a double count. */
static int32_t combine(verifier *v, int32_t left, int32_t right, int32_t rank, int32_t op,
                       int64_t element) {
    for (int32_t w = 0; w < v->words; w++) {
        uint64_t shared = v->bits[(size_t)left * v->words + w] & v->bits[(size_t)right * v->words + w];
        if (shared) {
            int32_t twice = w * 64 + __builtin_ctzll(shared);
            fail_at(v, rank, op,
                    "REDUCE counts the contribution of rank %d twice (element %" PRId64 ")",
                    twice, element);
            return UNDEFINED_VALUE;
        }
    }
    int32_t value = new_value(v);
    if (value == UNDEFINED_VALUE) return value;
    for (int32_t w = 0; w < v->words; w++)
        v->bits[(size_t)value * v->words + w] =
            v->bits[(size_t)left * v->words + w] | v->bits[(size_t)right * v->words + w];
    v->ordered[value] = v->ordered[left] && v->ordered[right] && v->high[left] + 1 == v->low[right];
    v->low[value] = v->low[left];
    v->high[value] = v->high[right];
    return value;
}

/* ---- interval maps --------------------------------------------------------------------- */

static interval_map *map_of(verifier *v, int32_t rank, int32_t buffer) {
    if (v->in_place && buffer == SCHED_SEND_BUFFER) buffer = SCHED_RECV_BUFFER;
    return &v->maps[(size_t)rank * BUFFERS_PER_RANK + buffer];
}

static int map_push(verifier *v, interval_map *map, int64_t start, int64_t end, int32_t value) {
    if (start >= end) return 1;
    if (map->count > 0) {
        segment *last = &map->items[map->count - 1];
        if (last->value == value && last->end == start) {
            last->end = end;
            return 1;
        }
    }
    if (grow(v, &map->items, &map->capacity, map->count + 1, sizeof *map->items) != 0)
        return 0;
    map->items[map->count++] = (segment){start, end, value};
    return 1;
}

/* Appends the pieces of map over [start, end) to out. */
static int map_read(verifier *v, const interval_map *map, int64_t start, int64_t end,
                    piece_list *out) {
    out->count = 0;
    /* binary search for the first segment ending after start */
    int32_t low = 0, high = map->count;
    while (low < high) {
        int32_t middle = (low + high) / 2;
        if (map->items[middle].end <= start) low = middle + 1;
        else high = middle;
    }
    for (int32_t i = low; i < map->count && map->items[i].start < end; i++) {
        int64_t from = map->items[i].start > start ? map->items[i].start : start;
        int64_t to = map->items[i].end < end ? map->items[i].end : end;
        if (grow(v, &out->items, &out->capacity, out->count + 1, sizeof *out->items) != 0)
            return 0;
        out->items[out->count++] = (piece){to - from, map->items[i].value};
    }
    return 1;
}

/* Replaces map over [start, start + total length of pieces) with pieces. */
static int map_write(verifier *v, interval_map *map, int64_t start, const piece *pieces,
                     int64_t piece_count) {
    int64_t end = start;
    for (int64_t i = 0; i < piece_count; i++) end += pieces[i].length;
    if (end == start) return 1;
    interval_map fresh = {0};
    int ok = 1;
    int32_t i = 0;
    for (; i < map->count && map->items[i].start < start; i++) {
        int64_t to = map->items[i].end < start ? map->items[i].end : start;
        ok &= map_push(v, &fresh, map->items[i].start, to, map->items[i].value);
    }
    int64_t at = start;
    for (int64_t p = 0; p < piece_count; p++) {
        ok &= map_push(v, &fresh, at, at + pieces[p].length, pieces[p].value);
        at += pieces[p].length;
    }
    for (i = 0; i < map->count; i++) {
        if (map->items[i].end <= end) continue;
        int64_t from = map->items[i].start > end ? map->items[i].start : end;
        ok &= map_push(v, &fresh, from, map->items[i].end, map->items[i].value);
    }
    free(map->items);
    *map = fresh;
    return ok;
}

/* ---- static checks: bounds, races, matching ------------------------------------------- */

static int64_t buffer_size(const verifier *v, const papcoll_schedule *schedule, int buffer) {
    if (buffer < SCHED_FIRST_SCRATCH) return v->count;
    return schedule->scratch_elements[buffer - SCHED_FIRST_SCRATCH];
}

static const char *buffer_name(int buffer, char *space, size_t size) {
    if (buffer == SCHED_SEND_BUFFER) return "send";
    if (buffer == SCHED_RECV_BUFFER) return "recv";
    snprintf(space, size, "scratch%d", buffer - SCHED_FIRST_SCRATCH);
    return space;
}

static void check_bounds(verifier *v, int32_t rank) {
    const papcoll_schedule *schedule = v->schedules[rank];
    char name[32];
    for (int32_t i = 0; i < schedule->op_count && !v->failed; i++) {
        const sched_op *op = &schedule->ops[i];
        int buffers[2] = {op->buffer, op->target_buffer};
        int64_t offsets[2] = {op->offset, op->u.target_offset};
        int regions = op->kind == SCHED_REDUCE || op->kind == SCHED_COPY ? 2 : 1;
        for (int r = 0; r < regions; r++) {
            if (buffers[r] >= SCHED_FIRST_SCRATCH + schedule->scratch_count) {
                fail_at(v, rank, i, "names buffer %d, which is not declared", buffers[r]);
                return;
            }
            int64_t size = buffer_size(v, schedule, buffers[r]);
            if (offsets[r] < 0 || op->length < 0 || offsets[r] > size - op->length) {
                fail_at(v, rank, i,
                        "region %s[%" PRId64 ",%" PRId64 ") lies outside the buffer of %" PRId64
                        " elements",
                        buffer_name(buffers[r], name, sizeof name), offsets[r],
                        offsets[r] + op->length, size);
                return;
            }
        }
        if ((op->kind == SCHED_SEND || op->kind == SCHED_RECV) &&
            (op->u.message.peer < 0 || op->u.message.peer >= v->ranks ||
             op->u.message.peer == rank)) {
            fail_at(v, rank, i, "peer %d is not another rank", op->u.message.peer);
            return;
        }
        if (op->kind == SCHED_RECV && op->buffer == SCHED_SEND_BUFFER) {
            fail_at(v, rank, i, "RECV writes the send buffer, which is read-only");
            return;
        }
    }
}

typedef struct message_key {
    int32_t source, destination, tag, op;
} message_key;

static int compare_message(const void *a, const void *b) {
    const message_key *x = a, *y = b;
    if (x->source != y->source) return x->source < y->source ? -1 : 1;
    if (x->destination != y->destination) return x->destination < y->destination ? -1 : 1;
    if (x->tag != y->tag) return x->tag < y->tag ? -1 : 1;
    return x->op < y->op ? -1 : x->op > y->op;
}

static int same_channel(const message_key *a, const message_key *b) {
    return a->source == b->source && a->destination == b->destination && a->tag == b->tag;
}

typedef struct access {
    int64_t start, end;
    int32_t op;
    int32_t buffer;
    int32_t writes;
} access;

static int compare_access(const void *a, const void *b) {
    const access *x = a, *y = b;
    if (x->buffer != y->buffer) return x->buffer < y->buffer ? -1 : 1;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return x->op < y->op ? -1 : x->op > y->op;
}

static const char *kind_name(int kind) {
    static const char *names[] = {"SEND", "RECV", "REDUCE", "COPY"};
    return names[kind & 3];
}

/* Answers ancestry questions within one rank's DAG. */
typedef struct ancestry {
    const papcoll_schedule *schedule;
    uint64_t *bits;           /* bitset per op, or NULL in search mode */
    int32_t words;
    int32_t *stamp, *stack;   /* search mode: visited marks and the DFS stack */
    int32_t query;
    uint8_t *descends;        /* search mode: which ops wait for cached_candidate */
    int32_t cached_candidate;
} ancestry;

static int ancestry_init(ancestry *a, const papcoll_schedule *schedule) {
    int32_t n = schedule->op_count;
    memset(a, 0, sizeof *a);
    a->schedule = schedule;
    if (n <= BITSET_OPS_LIMIT) {
        a->words = (n + 63) / 64;
        a->bits = calloc((size_t)n * a->words, sizeof *a->bits);
        if (a->bits == NULL) return 0;
        for (int32_t i = 0; i < n; i++) {
            int32_t dependency_count;
            const int32_t *dependencies = sched_dependencies(schedule, i, &dependency_count);
            uint64_t *mine = a->bits + (size_t)i * a->words;
            for (int32_t d = 0; d < dependency_count; d++) {
                int32_t parent = dependencies[d];
                const uint64_t *theirs = a->bits + (size_t)parent * a->words;
                for (int32_t w = 0; w <= parent / 64; w++) mine[w] |= theirs[w];
                mine[parent / 64] |= 1ull << (parent % 64);
            }
        }
        return 1;
    }
    a->stamp = calloc((size_t)n, sizeof *a->stamp);
    a->stack = malloc((size_t)n * sizeof *a->stack);
    a->descends = malloc((size_t)n);
    a->cached_candidate = -1;
    return a->stamp != NULL && a->stack != NULL && a->descends != NULL;
}

static void ancestry_release(ancestry *a) {
    free(a->bits);
    free(a->stamp);
    free(a->stack);
    free(a->descends);
}

/* Does op `of` (transitively) wait for op `candidate`? */
static int is_ancestor(ancestry *a, int32_t of, int32_t candidate) {
    if (candidate >= of) return 0;
    if (a->bits) return (a->bits[(size_t)of * a->words + candidate / 64] >> (candidate % 64)) & 1;
    if (a->cached_candidate == candidate) return a->descends[of];
    if (of - candidate > 256) {
        /* A far question: mark every descendant of candidate in one forward pass and keep
         * it, as the race sweep tends to ask about the same op many times in a row. */
        int32_t n = a->schedule->op_count;
        memset(a->descends + candidate, 0, (size_t)(n - candidate));
        for (int32_t op = candidate + 1; op < n; op++) {
            int32_t count;
            const int32_t *dependencies = sched_dependencies(a->schedule, op, &count);
            for (int32_t d = 0; d < count && !a->descends[op]; d++)
                a->descends[op] = dependencies[d] == candidate ||
                                  (dependencies[d] > candidate && a->descends[dependencies[d]]);
        }
        a->cached_candidate = candidate;
        return a->descends[of];
    }
    /* A near question: search backwards; only ops above candidate can lie on a path, as
     * dependencies point to smaller indices. */
    int32_t depth = 0;
    a->query++;
    a->stack[depth++] = of;
    a->stamp[of] = a->query;
    while (depth > 0) {
        int32_t op = a->stack[--depth], count;
        const int32_t *dependencies = sched_dependencies(a->schedule, op, &count);
        for (int32_t d = 0; d < count; d++) {
            int32_t parent = dependencies[d];
            if (parent == candidate) return 1;
            if (parent < candidate || a->stamp[parent] == a->query) continue;
            a->stamp[parent] = a->query;
            a->stack[depth++] = parent;
        }
    }
    return 0;
}

/* Races and deterministic matching for one rank; aliased = MPI_IN_PLACE buffers. */
static void check_ordering(verifier *v, int32_t rank, int aliased) {
    const papcoll_schedule *schedule = v->schedules[rank];
    int32_t n = schedule->op_count;
    if (n == 0) return;
    ancestry ancestors;
    access *accesses = malloc((size_t)n * 2 * sizeof *accesses);
    if (!ancestry_init(&ancestors, schedule) || accesses == NULL) {
        ancestry_release(&ancestors);
        free(accesses);
        v->out_of_memory = 1;
        fail_at(v, rank, -1, "out of memory");
        return;
    }
    int32_t access_count = 0;
    for (int32_t i = 0; i < n; i++) {
        const sched_op *op = &schedule->ops[i];
        if (op->length == 0) continue;
        int source = op->buffer, target = op->target_buffer;
        if (aliased && source == SCHED_SEND_BUFFER) source = SCHED_RECV_BUFFER;
        if (aliased && target == SCHED_SEND_BUFFER) target = SCHED_RECV_BUFFER;
        switch (op->kind) {
        case SCHED_SEND:
        case SCHED_RECV:
            accesses[access_count++] = (access){op->offset, op->offset + op->length, i, source,
                                                op->kind == SCHED_RECV};
            break;
        default:
            if (source == target && op->offset != op->u.target_offset &&
                op->offset < op->u.target_offset + op->length &&
                op->u.target_offset < op->offset + op->length) {
                fail_at(v, rank, i, "%s source and target overlap partially", kind_name(op->kind));
                goto done;
            }
            /* An in-place COPY onto itself (send -> recv with MPI_IN_PLACE) touches nothing. */
            if (source == target && op->offset == op->u.target_offset && op->kind == SCHED_COPY)
                break;
            accesses[access_count++] = (access){op->offset, op->offset + op->length, i, source, 0};
            accesses[access_count++] = (access){op->u.target_offset,
                                                op->u.target_offset + op->length, i, target, 1};
        }
    }
    qsort(accesses, (size_t)access_count, sizeof *accesses, compare_access);
    /* Sweep each buffer: every pair of overlapping accesses with a write must be ordered. */
    for (int32_t a = 0; a < access_count && !v->failed; a++) {
        for (int32_t b = a + 1; b < access_count; b++) {
            if (accesses[b].buffer != accesses[a].buffer || accesses[b].start >= accesses[a].end)
                break;
            if (!accesses[a].writes && !accesses[b].writes) continue;
            int32_t early = accesses[a].op < accesses[b].op ? accesses[a].op : accesses[b].op;
            int32_t late = accesses[a].op ^ accesses[b].op ^ early;
            if (early == late || is_ancestor(&ancestors, late, early)) continue;
            char name[32];
            int64_t from = accesses[b].start;
            int64_t to = accesses[a].end < accesses[b].end ? accesses[a].end : accesses[b].end;
            fail_at(v, rank, late,
                    "race: %s and op %d (%s) may run at the same time on %s[%" PRId64 ",%" PRId64
                    ") and one writes; op %d must wait for op %d",
                    kind_name(schedule->ops[late].kind), early,
                    kind_name(schedule->ops[early].kind),
                    buffer_name(accesses[a].buffer, name, sizeof name), from, to, late, early);
            break;
        }
    }
    /* Same channel, same direction: consecutive messages must be DAG-ordered. Sorting by
     * (kind, peer, tag, index) puts each channel's messages next to each other. */
    if (!aliased) {
        int32_t message_count = 0;
        message_key *messages = malloc((size_t)n * sizeof *messages);
        if (messages == NULL) {
            v->out_of_memory = 1;
            fail_at(v, rank, -1, "out of memory");
            goto done;
        }
        for (int32_t i = 0; i < n; i++) {
            const sched_op *op = &schedule->ops[i];
            if (op->kind == SCHED_SEND || op->kind == SCHED_RECV)
                messages[message_count++] =
                    (message_key){op->kind, op->u.message.peer, op->u.message.tag, i};
        }
        qsort(messages, (size_t)message_count, sizeof *messages, compare_message);
        for (int32_t m = 1; m < message_count && !v->failed; m++) {
            const message_key *previous = &messages[m - 1], *next = &messages[m];
            if (!same_channel(previous, next) || is_ancestor(&ancestors, next->op, previous->op))
                continue;
            fail_at(v, rank, next->op,
                    "%s %s rank %d tag %d is not ordered after op %d on the same peer and tag, "
                    "so MPI could match them either way",
                    kind_name(previous->source), previous->source == SCHED_SEND ? "to" : "from",
                    previous->destination, previous->tag, previous->op);
        }
        free(messages);
    }
done:
    ancestry_release(&ancestors);
    free(accesses);
}

/* Pairs the k-th SEND of each channel with its k-th RECV. */
static void match_messages(verifier *v) {
    int64_t sends = 0, recvs = 0;
    for (int32_t r = 0; r < v->ranks; r++)
        for (int32_t i = 0; i < v->schedules[r]->op_count; i++) {
            sends += v->schedules[r]->ops[i].kind == SCHED_SEND;
            recvs += v->schedules[r]->ops[i].kind == SCHED_RECV;
        }
    message_key *send_keys = malloc((size_t)(sends + 1) * sizeof *send_keys);
    message_key *recv_keys = malloc((size_t)(recvs + 1) * sizeof *recv_keys);
    if (send_keys == NULL || recv_keys == NULL) {
        v->out_of_memory = 1;
        fail_at(v, -1, -1, "out of memory");
        goto done;
    }
    int64_t s = 0, q = 0;
    for (int32_t r = 0; r < v->ranks; r++)
        for (int32_t i = 0; i < v->schedules[r]->op_count; i++) {
            const sched_op *op = &v->schedules[r]->ops[i];
            if (op->kind == SCHED_SEND)
                send_keys[s++] = (message_key){r, op->u.message.peer, op->u.message.tag, i};
            else if (op->kind == SCHED_RECV)
                recv_keys[q++] = (message_key){op->u.message.peer, r, op->u.message.tag, i};
        }
    qsort(send_keys, (size_t)sends, sizeof *send_keys, compare_message);
    qsort(recv_keys, (size_t)recvs, sizeof *recv_keys, compare_message);
    s = q = 0;
    while (!v->failed && (s < sends || q < recvs)) {
        if (q >= recvs || (s < sends && compare_message(&send_keys[s], &recv_keys[q]) < 0 &&
                           !same_channel(&send_keys[s], &recv_keys[q]))) {
            fail_at(v, send_keys[s].source, send_keys[s].op,
                    "SEND to rank %d tag %d has no matching RECV", send_keys[s].destination,
                    send_keys[s].tag);
            break;
        }
        if (s >= sends || !same_channel(&send_keys[s], &recv_keys[q])) {
            fail_at(v, recv_keys[q].destination, recv_keys[q].op,
                    "RECV from rank %d tag %d has no matching SEND", recv_keys[q].source,
                    recv_keys[q].tag);
            break;
        }
        const message_key *send = &send_keys[s++], *recv = &recv_keys[q++];
        int64_t send_length = v->schedules[send->source]->ops[send->op].length;
        int64_t recv_length = v->schedules[recv->destination]->ops[recv->op].length;
        if (send_length != recv_length) {
            fail_at(v, recv->destination, recv->op,
                    "RECV of %" PRId64 " elements from rank %d tag %d meets a SEND (rank %d op %d) "
                    "of %" PRId64 " elements",
                    recv_length, send->source, send->tag, send->source, send->op, send_length);
            break;
        }
        v->states[send->source].partner[send->op] = recv->op;
        v->states[recv->destination].partner[recv->op] = send->op;
    }
done:
    free(send_keys);
    free(recv_keys);
}

/* ---- execution ------------------------------------------------------------------------ */

static void push_ready(verifier *v, int32_t rank, int32_t op) {
    if (grow(v, &v->worklist, &v->worklist_capacity, v->worklist_tail + 1,
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
    return op->length * (int64_t)v->elem_size <= v->eager_limit;
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
        if (grow(v, &v->pool.items, &v->pool.capacity, v->pool.count + v->scratch_a.count,
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
            if (grow(v, &v->scratch_out.items, &v->scratch_out.capacity,
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
        for (size_t m = 0; m < (size_t)v->ranks * BUFFERS_PER_RANK; m++) free(v->maps[m].items);
    free(v->states);
    free(v->maps);
    free(v->bits);
    free(v->low);
    free(v->high);
    free(v->ordered);
    free(v->pool.items);
    free(v->scratch_a.items);
    free(v->scratch_b.items);
    free(v->scratch_out.items);
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
    int all_ordered = 1;
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
            for (int32_t q = 0; q < v->ranks; q++)
                if (!has_contribution(v, value, q)) {
                    fail_at(v, r, -1,
                            "result element %" PRId64 " misses the contribution of rank %d",
                            element, q);
                    break;
                }
            if (v->failed) break;
            all_ordered &= v->ordered[value] && v->low[value] == 0 && v->high[value] == v->ranks - 1;
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
    } else {
        v->report->order_preserved &= all_ordered;
    }
}

static int64_t lower_bound_elements(int32_t ranks, int64_t count) {
    /* ceil(2 (P-1) count / P) without overflow: count = quotient P + remainder */
    int64_t quotient = count / ranks, remainder = count % ranks;
    int64_t tail = 2 * (int64_t)(ranks - 1) * remainder;
    return 2 * (int64_t)(ranks - 1) * quotient + (tail + ranks - 1) / ranks;
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
    papcoll_verify_options defaults = {0, 1};
    if (options == NULL) options = &defaults;
    int64_t count = schedules[0]->count;
    int32_t elem_size = schedules[0]->elem_size;
    report->ok = 1;
    report->lower_bound_bytes = ranks > 1 ? lower_bound_elements(ranks, count) * elem_size : 0;
    for (int32_t r = 0; r < ranks; r++) {
        int64_t sent = 0, received = 0, scratch = 0;
        for (int32_t i = 0; i < schedules[r]->op_count; i++) {
            const sched_op *op = &schedules[r]->ops[i];
            if (op->kind == SCHED_SEND) sent += op->length * elem_size;
            if (op->kind == SCHED_RECV) received += op->length * elem_size;
        }
        for (int32_t s = 0; s < schedules[r]->scratch_count; s++)
            scratch += schedules[r]->scratch_elements[s];
        report->total_bytes_sent += sent;
        if (sent > report->max_bytes_sent) report->max_bytes_sent = sent;
        if (received > report->max_bytes_received) report->max_bytes_received = received;
        if (schedules[r]->op_count > report->max_ops) report->max_ops = schedules[r]->op_count;
        if (scratch > report->max_scratch_elements) report->max_scratch_elements = scratch;
    }
    int out_of_memory = 0;
    for (int mode = 0; mode < (options->check_in_place ? 2 : 1) && report->ok; mode++) {
        verifier v = {0};
        v.schedules = schedules;
        v.ranks = ranks;
        v.count = count;
        v.elem_size = elem_size;
        v.words = (ranks + 63) / 64;
        v.in_place = mode;
        v.eager_limit = options->eager_limit_bytes;
        v.report = report;
        v.mode = mode ? "with MPI_IN_PLACE: " : "";
        for (int32_t r = 0; r < ranks && !v.failed; r++) check_bounds(&v, r);
        for (int32_t r = 0; r < ranks && !v.failed; r++) check_ordering(&v, r, mode);
        if (!v.failed) run(&v);
        out_of_memory |= v.out_of_memory;
        release(&v);
    }
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
