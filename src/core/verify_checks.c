/* verify_checks.c - what the verifier proves before it runs the schedules (verifier.h):
 * regions inside their buffers; no races (two ops on overlapping elements, one writing, are
 * ordered by the DAG); deterministic matching (same-channel messages DAG-ordered); every
 * SEND paired with a RECV of the same length. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "growth.h"
#include "verifier.h"

/* Race analysis asks "is op a an ancestor of op b?". Up to this many ops per rank it keeps an
 * ancestor bitset per op (n^2 / 8 bytes: 8 MiB at the limit); above, it searches the DAG
 * backwards per question, which needs O(n) memory. */
#define BITSET_OPS_LIMIT 8192

/* ---- static checks: bounds, races, matching ------------------------------------------- */

static int64_t buffer_size(const verifier *v, const papcoll_schedule *schedule, int buffer) {
    if (buffer < SCHED_FIRST_SCRATCH) return v->count;
    return schedule->scratch_elements[buffer - SCHED_FIRST_SCRATCH];
}

void check_bounds(verifier *v, int32_t rank) {
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

typedef struct buffer_access {
    int64_t start, end;
    int32_t op;
    int32_t buffer;
    int32_t writes;
} buffer_access;

static int compare_access(const void *a, const void *b) {
    const buffer_access *x = a, *y = b;
    if (x->buffer != y->buffer) return x->buffer < y->buffer ? -1 : 1;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return x->op < y->op ? -1 : x->op > y->op;
}

/* Above BITSET_OPS_LIMIT ops, a rank's DAG is cut into chains (each op continues the chain
 * of a dependency that is still that chain's last op, else starts one), and every op keeps,
 * per chain, the latest op of that chain it waits for: "a before b" is then one lookup. The
 * pipelines of segmented algorithms are a few chains however long (segmented_ring: 12 for
 * 39,000 ops), where searching the DAG per question was quadratic. Only ops that others wait
 * for take part: an op nobody waits for (the REDUCE that ends each piece, often most of the
 * ops) would start a chain of its own, and "does it wait for x" is answered from its direct
 * dependencies' rows instead. Schedules with many chains even so (linear's root receives from
 * P ranks independently) would need n x chains entries: above this many, the search below
 * answers instead. */
#define CHAIN_ENTRIES_LIMIT (1 << 26) /* 256 MiB */

/* The search visits at most this many dependencies in all for one verification, over every
 * rank and both buffer modes (some seconds): a DAG whose questions need more is refused as
 * too large to check, never a run of hours (a hand-written 300,000-op schedule whose every
 * REDUCE asked about a different far op took 6 minutes before the chains above skipped the
 * ops nobody waits for). */
#define SEARCH_MAX_STEPS (INT64_C(1) << 30)

/* Answers ancestry questions within one rank's DAG. */
typedef struct ancestry {
    const papcoll_schedule *schedule;
    uint64_t *bits;           /* bitset per op, or NULL in the other modes */
    int32_t words;
    int32_t *chain_of;        /* chain mode: each op's chain, -1: nobody waits for the op */
    int32_t *row_of;          /* chain mode: each op's row of `latest`, -1: nobody waits */
    int32_t *latest;          /* chain mode: row x chain, the latest op of the chain the op
                                 waits for (itself on its own chain), -1 none */
    int32_t chain_count;
    int32_t *stamp, *stack;   /* search mode: visited marks and the DFS stack */
    int32_t query;
    uint8_t *descends;        /* search mode: which ops wait for cached_candidate */
    int32_t cached_candidate;
    int64_t *steps;           /* search mode: dependencies visited so far, over every rank and
                                 mode of one verification (verifier.search_steps) */
    int exhausted;            /* search mode: SEARCH_MAX_STEPS passed; answers are void */
} ancestry;

/* Chain mode, when the chains fit CHAIN_ENTRIES_LIMIT: 1, or 0 to search instead. */
static int chains_init(ancestry *a, const papcoll_schedule *schedule) {
    int32_t n = schedule->op_count;
    int32_t *chain_of = malloc((size_t)n * sizeof *chain_of);
    int32_t *row_of = malloc((size_t)n * sizeof *row_of);
    int32_t *tail = malloc((size_t)n * sizeof *tail); /* per chain: its last op so far */
    int32_t chains = 0, rows = 0;
    int32_t *latest = NULL;
    if (chain_of == NULL || row_of == NULL || tail == NULL) goto fail;
    /* who is waited for: dependencies point to earlier ops, so one pass marks them all */
    for (int32_t op = 0; op < n; op++) row_of[op] = -1;
    for (int32_t op = 0; op < n; op++) {
        int32_t count;
        const int32_t *dependencies = sched_dependencies(schedule, op, &count);
        for (int32_t d = 0; d < count; d++) row_of[dependencies[d]] = 0;
    }
    for (int32_t op = 0; op < n; op++) {
        chain_of[op] = -1;
        if (row_of[op] < 0) continue;
        row_of[op] = rows++;
        int32_t count;
        const int32_t *dependencies = sched_dependencies(schedule, op, &count);
        for (int32_t d = 0; d < count && chain_of[op] < 0; d++)
            if (tail[chain_of[dependencies[d]]] == dependencies[d])
                chain_of[op] = chain_of[dependencies[d]];
        if (chain_of[op] < 0) chain_of[op] = chains++;
        tail[chain_of[op]] = op;
    }
    if ((int64_t)rows * chains > CHAIN_ENTRIES_LIMIT) goto fail;
    latest = malloc((size_t)rows * (size_t)chains * sizeof *latest + 1);
    if (latest == NULL) goto fail;
    for (int32_t op = 0; op < n; op++) {
        if (row_of[op] < 0) continue;
        int32_t *mine = latest + (size_t)row_of[op] * (size_t)chains, count;
        for (int32_t c = 0; c < chains; c++) mine[c] = -1;
        const int32_t *dependencies = sched_dependencies(schedule, op, &count);
        for (int32_t d = 0; d < count; d++) {
            const int32_t *theirs = latest + (size_t)row_of[dependencies[d]] * (size_t)chains;
            for (int32_t c = 0; c < chains; c++)
                if (theirs[c] > mine[c]) mine[c] = theirs[c];
        }
        mine[chain_of[op]] = op;
    }
    free(tail);
    a->chain_of = chain_of;
    a->row_of = row_of;
    a->latest = latest;
    a->chain_count = chains;
    return 1;
fail:
    free(chain_of);
    free(row_of);
    free(tail);
    free(latest);
    return 0;
}

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
    if (chains_init(a, schedule)) return 1;
    a->stamp = calloc((size_t)n, sizeof *a->stamp);
    a->stack = malloc((size_t)n * sizeof *a->stack);
    a->descends = malloc((size_t)n);
    a->cached_candidate = -1;
    return a->stamp != NULL && a->stack != NULL && a->descends != NULL;
}

static void ancestry_release(ancestry *a) {
    free(a->bits);
    free(a->chain_of);
    free(a->row_of);
    free(a->latest);
    free(a->stamp);
    free(a->stack);
    free(a->descends);
}

/* Does op `of` (transitively) wait for op `candidate`? */
static int is_ancestor(ancestry *a, int32_t of, int32_t candidate) {
    if (candidate >= of) return 0;
    if (a->bits) return (a->bits[(size_t)of * a->words + candidate / 64] >> (candidate % 64)) & 1;
    /* a chain's ops wait for each other in order, so reaching any later op of candidate's
     * chain means reaching candidate */
    if (a->latest) {
        int32_t chain = a->chain_of[candidate];
        if (chain < 0) return 0; /* nobody waits for candidate */
        if (a->row_of[of] >= 0)
            return a->latest[(size_t)a->row_of[of] * (size_t)a->chain_count + (size_t)chain] >=
                   candidate;
        /* nobody waits for `of`: it waits for candidate through one of its dependencies */
        int32_t count;
        const int32_t *dependencies = sched_dependencies(a->schedule, of, &count);
        for (int32_t d = 0; d < count; d++)
            if (dependencies[d] == candidate ||
                (dependencies[d] > candidate &&
                 a->latest[(size_t)a->row_of[dependencies[d]] * (size_t)a->chain_count +
                           (size_t)chain] >= candidate))
                return 1;
        return 0;
    }
    /* Most questions are about a direct dependency (the op that wrote what this one reads):
     * answered from the list, without a pass over the ops between them. */
    int32_t direct_count;
    const int32_t *direct = sched_dependencies(a->schedule, of, &direct_count);
    for (int32_t d = 0; d < direct_count; d++)
        if (direct[d] == candidate) return 1;
    if (a->cached_candidate == candidate) return a->descends[of];
    if (a->exhausted) return 1; /* void: check_ordering refuses the schedule */
    if (of - candidate > 256) {
        /* A far question: mark every descendant of candidate in one forward pass and keep
         * it, as the race sweep tends to ask about the same op many times in a row. */
        int32_t n = a->schedule->op_count;
        if (*a->steps > SEARCH_MAX_STEPS) {
            a->exhausted = 1;
            return 1;
        }
        memset(a->descends + candidate, 0, (size_t)(n - candidate));
        for (int32_t op = candidate + 1; op < n; op++) {
            int32_t count;
            const int32_t *dependencies = sched_dependencies(a->schedule, op, &count);
            *a->steps += 1 + count; /* one pass is linear; the next question checks */
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
        if (*a->steps > SEARCH_MAX_STEPS) {
            a->exhausted = 1;
            return 1;
        }
        int32_t op = a->stack[--depth], count;
        const int32_t *dependencies = sched_dependencies(a->schedule, op, &count);
        *a->steps += 1 + count;
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

/* ---- races: a fast pass that says whether there is one, the sweep that names it --------- */

/* Whether any two of the accesses (in op order) overlap, one writing, without being ordered
 * by the DAG. Pairwise that is quadratic in ops on one region (linear's root reduces P
 * times into one accumulator). As ancestry is transitive it suffices, op by op,
 * to check each element's last writer and the readers since: when every op is ordered after
 * those, every earlier op on the element is ordered before it too. Each buffer's elements
 * are cut at every region boundary; the cost is the number of (access, stretch) pairs.
 * 1: a race (or out of memory: then the sweep decides); 0: none. */
typedef struct reader {
    int32_t op, next; /* the next reader of the same piece, -1 at the end */
} reader;

typedef struct stretch_state {
    int32_t writer;  /* the last op that wrote it, -1: none */
    int32_t readers; /* the readers since, a list in the reader pool, -1: none */
} stretch_state;

typedef struct question {
    int32_t late, early;
} question;

/* Is op `late` ordered after op `early` (an op is with itself)? Remembers the last yes, as
 * an op asks about the same writer for every stretch it covers. */
static int ordered_after(ancestry *ancestors, question *last_yes, int32_t late, int32_t early) {
    if (early == late || (early == last_yes->early && late == last_yes->late)) return 1;
    if (!is_ancestor(ancestors, late, early)) return 0;
    *last_yes = (question){late, early};
    return 1;
}

static int compare_element(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The index of `element` in the sorted distinct cuts[0 .. count), where it is. */
static int64_t cut_index(const int64_t *cuts, int64_t count, int64_t element) {
    int64_t low = 0, high = count;
    while (low < high) {
        int64_t middle = low + (high - low) / 2;
        if (cuts[middle] < element) low = middle + 1;
        else high = middle;
    }
    return low;
}

/* may_race's answers besides 0 (no race) and 1 (a race, or out of memory) */
#define MAY_RACE_TOO_MUCH_WORK 2
/* The (access, stretch) pairs may_race visits at most (a few seconds, some 10 ns each).
 * Schedules papcoll builds visit about one per access; a hand-written one where each of n
 * ops reads a whole buffer that n others cut into pieces visits n^2: refused as too large
 * to check (the pairwise sweep would be quadratic too), rather than running for hours. */
#define MAY_RACE_MAX_STEPS (INT64_C(1) << 28)

static int may_race(const buffer_access *accesses, int32_t access_count, ancestry *ancestors) {
    int32_t *order = malloc((size_t)access_count * sizeof *order);
    int64_t *cuts = malloc((size_t)access_count * 2 * sizeof *cuts);
    stretch_state *stretches = malloc((size_t)access_count * 2 * sizeof *stretches);
    reader *readers = NULL;
    size_t reader_capacity = 0;
    int32_t reader_count = 0, group_first[BUFFERS_PER_RANK + 1] = {0};
    int race = order == NULL || cuts == NULL || stretches == NULL;
    int64_t steps = 0;
    /* group the accesses by buffer, each group still in op order (a counting sort) */
    for (int32_t a = 0; a < access_count && !race; a++) group_first[accesses[a].buffer + 1]++;
    for (int b = 0; b < BUFFERS_PER_RANK; b++) group_first[b + 1] += group_first[b];
    int32_t placed[BUFFERS_PER_RANK];
    memcpy(placed, group_first, sizeof placed);
    for (int32_t a = 0; a < access_count && !race; a++) order[placed[accesses[a].buffer]++] = a;
    question last_yes = {-1, -1};
    for (int b = 0; b < BUFFERS_PER_RANK && !race; b++) {
        int32_t first = group_first[b], end = group_first[b + 1];
        int64_t cut_count = 0;
        for (int32_t g = first; g < end; g++) {
            cuts[cut_count++] = accesses[order[g]].start;
            cuts[cut_count++] = accesses[order[g]].end;
        }
        qsort(cuts, (size_t)cut_count, sizeof *cuts, compare_element);
        int64_t distinct = 0;
        for (int64_t c = 0; c < cut_count; c++)
            if (distinct == 0 || cuts[distinct - 1] != cuts[c]) cuts[distinct++] = cuts[c];
        for (int64_t t = 0; t < distinct; t++) stretches[t] = (stretch_state){-1, -1};
        for (int32_t g = first; g < end && !race; g++) {
            const buffer_access *at = &accesses[order[g]];
            int64_t from = cut_index(cuts, distinct, at->start);
            int64_t to = cut_index(cuts, distinct, at->end);
            steps += to - from;
            if (steps > MAY_RACE_MAX_STEPS) race = MAY_RACE_TOO_MUCH_WORK;
            for (int64_t t = from; t < to && !race; t++) {
                stretch_state *stretch = &stretches[t];
                /* the writer, then (for a write) the readers, must all come before this op.
                 * A write after readers need not ask about the writer: each reader was found
                 * ordered after it, and the readers are usually this write's direct
                 * dependencies while the writer may lie far back (linear_tree's final
                 * receive of a segment waits for the send of its reduced value). */
                if (stretch->writer >= 0 && !(at->writes && stretch->readers >= 0))
                    race = !ordered_after(ancestors, &last_yes, at->op, stretch->writer);
                for (int32_t r = stretch->readers; at->writes && r >= 0 && !race; r = readers[r].next)
                    race = !ordered_after(ancestors, &last_yes, at->op, readers[r].op);
                if (race) break;
                if (at->writes) {
                    *stretch = (stretch_state){at->op, -1};
                } else if (grow_array((void **)&readers, &reader_capacity,
                                      (size_t)reader_count + 1, sizeof *readers) != 0 ||
                           reader_count == INT32_MAX) {
                    race = 1; /* out of memory: let the sweep decide */
                } else {
                    readers[reader_count] = (reader){at->op, stretch->readers};
                    stretch->readers = reader_count++;
                }
            }
        }
    }
    free(order);
    free(cuts);
    free(stretches);
    free(readers);
    return race;
}

/* Races and deterministic matching for one rank; aliased = MPI_IN_PLACE buffers. */
void check_ordering(verifier *v, int32_t rank, int aliased) {
    const papcoll_schedule *schedule = v->schedules[rank];
    int32_t n = schedule->op_count;
    if (n == 0) return;
    ancestry ancestors;
    buffer_access *accesses = malloc((size_t)n * 2 * sizeof *accesses);
    int ready = ancestry_init(&ancestors, schedule);
    ancestors.steps = &v->search_steps;
    if (!ready || accesses == NULL) {
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
            accesses[access_count++] = (buffer_access){op->offset, op->offset + op->length, i, source,
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
            accesses[access_count++] = (buffer_access){op->offset, op->offset + op->length, i, source, 0};
            accesses[access_count++] = (buffer_access){op->u.target_offset,
                                                op->u.target_offset + op->length, i, target, 1};
        }
    }
    /* When there is a race, sweep each buffer for the first in (buffer, start, op) order:
     * every pair of overlapping accesses with a write must be ordered. */
    int race = may_race(accesses, access_count, &ancestors);
    if (race == MAY_RACE_TOO_MUCH_WORK) {
        v->too_large_rank = rank;
        v->too_large_why = "its operations overlap in more than 2^28 (operation, element "
                           "range) pairs";
        v->failed = 1;
        goto done;
    }
    if (race)
        qsort(accesses, (size_t)access_count, sizeof *accesses, compare_access);
    else
        access_count = 0;
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
    if (ancestors.exhausted) {
        v->too_large_rank = rank;
        v->too_large_why = "the dependencies need more than 2^30 search steps (over every "
                           "rank) to decide which operations are ordered";
        v->failed = 1;
    }
    ancestry_release(&ancestors);
    free(accesses);
}

/* Pairs the k-th SEND of each channel with its k-th RECV. */
void match_messages(verifier *v) {
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
