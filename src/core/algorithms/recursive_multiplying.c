/* recursive_multiplying.c - recursive multiplying all-reduce (Ruefenacht et al. 2017, Sect. 4):
 * recursive doubling generalised so that stage i exchanges with B_i - 1 peers at once (message
 * pipelining makes the extra messages of a stage nearly free), driven by a schedule string in the
 * paper's language (Section 4.2). The language (stages aB, cTmB, eTmB, mRgGaB, nRgGaB, with
 * worked examples), its checks and the default schedule are in parts/rm_language.h; this file
 * builds one rank's schedule from a parsed one.
 *
 * Operand order: every reduction combines the values of a stage in virtual-rank order,
 * associated the same way on every rank (v_0 op (v_1 op (... op v_{B-1})), built with
 * source-left reductions), so results are bitwise identical on all ranks (Ruefenacht et al. 2017
 * ask for this). Factored and collapse schedules keep the rank order (a block covers consecutive
 * ranks); merges do not (the extras' vectors join a block in the middle): with a non-commutative
 * op (context->keep_order) a merge schedule is refused. Scratch: (largest number of vectors a
 * rank receives in one stage) x count elements; the accumulator moves to the buffer of the last
 * vector of a stage, so only the end may copy. MPICH's recursive doubling is "a2,...,a2", or
 * "c{2r}m2,a2,...,a2,e{2r}m2" with r = P - 2^k. Default (empty string): papcoll_rm_default
 * (parts/rm_language.c).
 */
#include <stdlib.h>
#include <string.h>

#include "../growth.h"
#include "../schedule.h"
#include "parts/rm_language.h"

/* ---- building one rank's schedule ------------------------------------------------------- */

/* Where a vector can be: region 0 is the receive buffer, region k >= 1 is slot k - 1 of the
 * scratch buffer. For each, the op that last wrote it and the ops that read it since, so
 * every op waits for exactly what it must (RAW, WAR, WAW). */
typedef struct rm_region {
    int32_t writer;
    int32_t *readers;
    int32_t reader_count;
    size_t reader_capacity;
} rm_region;

typedef struct rm_builder {
    papcoll_schedule *out;
    int64_t count;
    int32_t scratch;       /* buffer id, or -1 */
    rm_region *regions;
    int32_t region_count;
    int32_t accumulator;   /* the region holding this rank's running result */
    int32_t *after;        /* dependency list being assembled */
    int32_t after_count;
    size_t after_capacity;
    int failed;
} rm_builder;

/* Appends op to a growing list; 0 when out of memory. */
static int append_op(int32_t **list, int32_t *count, size_t *capacity, int32_t op) {
    if (grow_array((void **)list, capacity, (size_t)*count + 1, sizeof **list) != 0) return 0;
    (*list)[(*count)++] = op;
    return 1;
}

static void need(rm_builder *b, int32_t op) {
    if (op != SCHED_NONE && !append_op(&b->after, &b->after_count, &b->after_capacity, op))
        b->failed = 1;
}

static void need_written(rm_builder *b, int32_t region) { need(b, b->regions[region].writer); }

static void need_all(rm_builder *b, int32_t region) {
    need(b, b->regions[region].writer);
    for (int32_t i = 0; i < b->regions[region].reader_count; i++)
        need(b, b->regions[region].readers[i]);
}

static void note_read(rm_builder *b, int32_t region, int32_t op) {
    rm_region *r = &b->regions[region];
    if (!append_op(&r->readers, &r->reader_count, &r->reader_capacity, op)) b->failed = 1;
}

static void note_written(rm_builder *b, int32_t region, int32_t op) {
    b->regions[region].writer = op;
    b->regions[region].reader_count = 0;
}

static sched_region region_of(const rm_builder *b, int32_t region) {
    return region == 0 ? SCHED_RECV_REGION(0, b->count)
                       : sched_region_of(b->scratch, (int64_t)(region - 1) * b->count, b->count);
}

static void send_region(rm_builder *b, int32_t peer, int32_t tag, int32_t region) {
    b->after_count = 0;
    need_written(b, region);
    int32_t op = sched_send(b->out, peer, tag, region_of(b, region), b->after, b->after_count);
    note_read(b, region, op);
}

static void receive_region(rm_builder *b, int32_t peer, int32_t tag, int32_t region) {
    b->after_count = 0;
    need_all(b, region);
    int32_t op = sched_recv(b->out, peer, tag, region_of(b, region), b->after, b->after_count);
    note_written(b, region, op);
}

/* target = source op target */
static void reduce_into(rm_builder *b, int32_t source, int32_t target) {
    b->after_count = 0;
    need_written(b, source);
    need_all(b, target);
    int32_t op = sched_reduce(b->out, region_of(b, source), region_of(b, target),
                              SCHED_SOURCE_LEFT, b->after, b->after_count);
    note_read(b, source, op);
    note_written(b, target, op);
}

/* A free region for an incoming vector: neither the accumulator nor one taken this stage. */
static int32_t take_region(rm_builder *b, const int32_t *taken, int32_t taken_count) {
    for (int32_t r = 0; r < b->region_count; r++) {
        int used = r == b->accumulator;
        for (int32_t i = 0; i < taken_count && !used; i++) used = taken[i] == r;
        if (!used) return r;
    }
    b->failed = 1; /* not reached: regions are sized for the busiest stage */
    return 0;
}

/* Reduces values[0 .. n) (regions, in operand order) as v0 op (v1 op (... op v_{n-1})) into
 * the last one's region, which becomes the accumulator. */
static void fold(rm_builder *b, const int32_t *values, int32_t n) {
    for (int32_t j = n - 2; j >= 0; j--) reduce_into(b, values[j], values[n - 1]);
    b->accumulator = values[n - 1];
}

/* The real rank of virtual rank v of level `depth` (levels[1..depth] each made from the
 * one before by a collapse or a merge). */
static int32_t real_rank(const rm_level *levels, int32_t depth, int32_t v) {
    for (int32_t d = depth; d >= 1; d--) {
        const rm_level *l = &levels[d];
        if (l->kind == 'c') {
            int32_t blocks = l->threshold / l->base;
            v = v < blocks ? v * l->base + l->base - 1 : v - blocks + l->threshold;
        }
    }
    return v;
}

/* Upper bound of the vectors one rank receives in a stage (sizes the scratch). */
static int32_t most_received(const rm_parsed *parsed) {
    int32_t most = 1;
    for (int32_t i = 0; i < parsed->count; i++) {
        const rm_stage *s = &parsed->stages[i];
        int32_t here = s->base - 1;
        if (s->kind == 'm') here += (s->remaining + s->groups - 1) / s->groups;
        if (s->kind == 'n') here = s->base;
        if (here > most) most = here;
    }
    return most;
}

/* The all-to-all part of a stage for virtual rank u of levels[depth]: exchange with the B - 1
 * peers of u's block at the level's stride; `extras` (real ranks, may be empty) also send u
 * their vectors, which go after the block's in the reduction. */
static void exchange(rm_builder *b, const rm_level *levels, int32_t depth, int32_t u,
                     int32_t base, int32_t tag, const int32_t *extras, int32_t extra_count) {
    int32_t taken[PAPCOLL_RM_MAX_BASE + 1], values[2 * PAPCOLL_RM_MAX_BASE + 2];
    int32_t received = 0, n = 0;
    const int32_t stride = levels[depth].done, digit = (u / stride) % base;
    const int32_t first = u - digit * stride;
    for (int32_t j = 0; j < base; j++) {
        if (j == digit) {
            values[n++] = b->accumulator;
            continue;
        }
        values[n] = take_region(b, taken, received);
        taken[received++] = values[n];
        receive_region(b, real_rank(levels, depth, first + j * stride), tag, values[n++]);
    }
    for (int32_t x = 0; x < extra_count; x++) {
        values[n] = take_region(b, taken, received);
        taken[received++] = values[n];
        receive_region(b, extras[x], tag, values[n++]);
    }
    for (int32_t j = 0; j < base; j++)
        if (j != digit)
            send_region(b, real_rank(levels, depth, first + j * stride), tag, b->accumulator);
    fold(b, values, n);
}

static int build_stages(rm_builder *b, const rm_parsed *parsed, int32_t ranks, int32_t rank) {
    rm_level levels[RM_MAX_STAGES + 1];
    int32_t me[RM_MAX_STAGES + 1]; /* this rank's virtual rank per level, -1: sits it out */
    /* A rank gets at most ceil(R / G) <= PAPCOLL_RM_MAX_BASE extras in a merge (rm_parse
     * checks B - 1 + ceil(R / G) against it), so no array of P entries, 8 GiB near 2^31. */
    int32_t depth = 0, values[PAPCOLL_RM_MAX_BASE + 1], extras[PAPCOLL_RM_MAX_BASE];
    levels[0] = (rm_level){'r', ranks, 1, 0, 0, 0, 0};
    me[0] = rank;
    for (int32_t i = 0; i < parsed->count && !b->failed; i++) {
        const rm_stage *s = &parsed->stages[i];
        const int32_t v = me[depth], B = s->base, tag = i;
        switch (s->kind) {
        case 'a':
            if (v >= 0) exchange(b, levels, depth, v, B, tag, NULL, 0);
            levels[depth].done *= B;
            break;
        case 'm': {
            /* the interior (the first G x B processes) becomes the group; the extras wait */
            const int32_t interior = levels[depth].size - s->remaining;
            levels[depth + 1] = (rm_level){'m', interior, 1, 0, 0, s->remaining, s->groups};
            me[depth + 1] = v >= 0 && v < interior ? v : -1;
            if (v >= 0 && v < interior) {
                /* the extras e with e % G == v / B: stepping by G, not testing all R of them,
                 * which near P = 2^31 takes seconds per rank (int64_t: e + G may pass 2^31) */
                int32_t extra_count = 0;
                for (int64_t e = v / B; e < s->remaining; e += s->groups)
                    extras[extra_count++] = real_rank(levels, depth, interior + (int32_t)e);
                exchange(b, levels, depth + 1, v, B, tag, extras, extra_count);
            } else if (v >= 0) { /* an extra: its vector to every member of its block */
                const int32_t block = (v - interior) % s->groups;
                for (int32_t k = 0; k < B; k++)
                    send_region(b, real_rank(levels, depth, block * B + k), tag, b->accumulator);
            }
            levels[++depth].done = B;
            break;
        }
        case 'n': {
            const int32_t outer = me[depth - 1], interior = levels[depth].size;
            const int32_t stride = levels[depth].done;
            if (v >= 0) {
                /* before the exchange, the extras of this n-group get this vector */
                /* e % G == v % stride, stepping by G as above (rm_parse makes G the stride) */
                for (int64_t e = v % stride; e < levels[depth - 1].size - interior;
                     e += s->groups)
                    send_region(b, real_rank(levels, depth - 1, interior + (int32_t)e), tag,
                                b->accumulator);
                exchange(b, levels, depth, v, B, tag, NULL, 0);
            } else if (outer >= interior) {
                /* an extra: the B vectors of its n-group hold everything, its own included */
                const int32_t group = (outer - interior) % s->groups;
                for (int32_t k = 0; k < B; k++) {
                    values[k] = take_region(b, values, k);
                    receive_region(b, real_rank(levels, depth, group + k * stride), tag,
                                   values[k]);
                }
                fold(b, values, B);
            }
            depth--;
            levels[depth].done = levels[depth].size;
            break;
        }
        case 'c': {
            const int32_t blocks = s->threshold / B;
            int32_t inner = -1;
            if (v >= s->threshold) {
                inner = v - s->threshold + blocks; /* in this order: no overflow near 2^31 */
            } else if (v >= 0 && v % B == B - 1) {
                /* the block's last member: gathers the other B - 1, in order, then itself */
                for (int32_t j = 0; j < B - 1; j++) {
                    values[j] = take_region(b, values, j);
                    receive_region(b, real_rank(levels, depth, v - (B - 1) + j), tag,
                                   values[j]);
                }
                values[B - 1] = b->accumulator;
                fold(b, values, B);
                inner = v / B;
            } else if (v >= 0) {
                send_region(b, real_rank(levels, depth, (v / B) * B + B - 1), tag,
                            b->accumulator);
            }
            levels[depth + 1] = (rm_level){'c', levels[depth].size - (s->threshold - blocks), 1,
                                           s->threshold, B, 0, 0};
            me[++depth] = inner;
            break;
        }
        case 'e': {
            depth--;
            const int32_t outer = me[depth];
            levels[depth].done = levels[depth].size;
            if (outer < 0 || outer >= s->threshold) break;
            const int32_t last = (outer / B) * B + B - 1;
            if (outer == last) {
                for (int32_t j = 0; j < B - 1; j++)
                    send_region(b, real_rank(levels, depth, last - (B - 1) + j), tag,
                                b->accumulator);
            } else {
                /* the result arrives where this rank's vector was */
                receive_region(b, real_rank(levels, depth, last), tag, b->accumulator);
            }
            break;
        }
        default:
            break;
        }
    }
    return b->failed ? sched_fail(b->out, PAPCOLL_ERR_NO_MEMORY, "out of memory") : PAPCOLL_OK;
}

static int recursive_multiplying_build(int32_t ranks, int32_t rank, int64_t count,
                                       int32_t elem_size, const papcoll_context *context,
                                       papcoll_schedule *out) {
    char fallback[256], message[200];
    const char *text = context ? context->parameters.schedule : NULL;
    if (text == NULL || text[strspn(text, " ")] == '\0') {
        papcoll_rm_default(ranks, fallback, sizeof fallback);
        text = fallback;
    }
    rm_parsed parsed;
    rm_error error = {message, sizeof message};
    if (ranks > 1 || text[0] != '\0') {
        if (rm_parse(text, ranks, &parsed, &error) != PAPCOLL_OK)
            return sched_fail(out, PAPCOLL_ERR_ARGUMENT, "schedule '%.60s': %s", text, message);
        if (parsed.merges > 0 && context && context->keep_order)
            return sched_fail(out, PAPCOLL_ERR_UNSUPPORTED,
                              "schedule '%.60s' merges ranks out of order, so it needs a "
                              "commutative op", text);
    } else {
        parsed.count = 0;
    }
    rm_builder b;
    memset(&b, 0, sizeof b);
    b.out = out;
    b.count = count;
    b.region_count = parsed.count ? most_received(&parsed) + 1 : 1;
    /* The scratch holds region_count - 1 vectors: its size in bytes must fit 64 bits, as
     * build.c asks of the receive buffer. */
    if (b.region_count > 1 && count > INT64_MAX / elem_size / (b.region_count - 1))
        return sched_fail(out, PAPCOLL_ERR_LIMIT, "schedule '%.60s': its scratch of %d x %lld "
                          "elements of %d bytes passes 2^63-1 bytes", text,
                          b.region_count - 1, (long long)count, elem_size);
    b.scratch = parsed.count ? sched_add_scratch(out, (int64_t)(b.region_count - 1) * count) : -1;
    b.regions = calloc((size_t)b.region_count, sizeof *b.regions);
    if (b.regions == NULL) return sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory");
    for (int32_t r = 0; r < b.region_count; r++) b.regions[r].writer = SCHED_NONE;
    /* the send buffer is read once, first, so MPI_IN_PLACE is safe */
    int32_t copy = sched_copy_own_vector(out);
    note_written(&b, 0, copy);
    build_stages(&b, &parsed, ranks, rank);
    if (b.accumulator != 0 && !b.failed) { /* the result belongs in the receive buffer */
        b.after_count = 0;
        need_written(&b, b.accumulator);
        need_all(&b, 0);
        sched_copy(out, region_of(&b, b.accumulator), SCHED_RECV_REGION(0, count), b.after,
                   b.after_count);
    }
    for (int32_t r = 0; r < b.region_count; r++) free(b.regions[r].readers);
    free(b.regions);
    free(b.after);
    return b.failed ? sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory") : sched_finish(out);
}

const algorithm_entry recursive_multiplying_algorithm = {
    .info = {
        .name = "recursive_multiplying",
        .description =
            "recursive doubling generalised: stage i exchanges with B_i - 1 peers at once, from"
            " a schedule such as a4,a3 or c6m2,a2,a2,e6m2",
        .source =
            "Ruefenacht et al. 2017 Section 4 (schedule language of Section 4.2), Table 2, "
            "Figs. 5-7 and 17-22",
        .limitations =
            "the schedule's bases must multiply to P (see `papcoll schedules`); merge schedules"
            " (mRgGaB / nRgGaB) reorder operands and are refused for a non-commutative op; "
            "scratch: (most vectors received in one stage) x count",
    },
    .build = recursive_multiplying_build,
};
