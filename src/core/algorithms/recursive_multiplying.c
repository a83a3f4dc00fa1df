/* recursive_multiplying.c - recursive multiplying all-reduce (seed 004 Section 4): recursive
 * doubling generalised so that stage i exchanges with B_i - 1 peers at once (message
 * pipelining makes the extra messages of a stage nearly free), driven by a schedule string
 * in the paper's language (Section 4.2). The paper's Algorithms 2-6 are figures missing
 * from our copy, so the semantics below are our reading of the text and of Figs. 2, 5-7 and
 * 20-22; each choice is marked "choice".
 *
 * The language: stages separated by commas, each working on the current *group* of
 * processes (at first all P ranks, numbered 0..P-1 as "virtual ranks" of the group).
 *   aB      all-to-all among B processes: the group is cut along its next mixed-radix digit.
 *           With stride s = the product of the bases already applied in this group, process
 *           v exchanges its whole vector with v + (j - d) s, j = 0..B-1 (d = (v / s) mod B),
 *           and reduces the B vectors. The bases of a group must multiply to its size.
 *   cTmB    collapse: processes v < T form T/B blocks of B; in each block, members 0..B-2
 *           send their vector to member B-1 (MPICH: even to odd), which reduces them and
 *           stays; processes v >= T stay too. The stages up to the matching eTmB work on the
 *           new group of T/B + (N - T) processes (block g is its process g, process v >= T
 *           is T/B + v - T). Choice: T must be a multiple of B, and a collapse must come
 *           first in its group (no aB before it there).
 *   eTmB    expand: closes the innermost cTmB (same T and B): each block's member B-1 sends
 *           the result to the other B - 1 members. The collapsed group must be complete.
 *   mRgGaB  merge: the last R processes of the group (the "extras") join a group of the
 *           other N - R = G x B processes (the "interior"). This stage is the interior's
 *           first aB stage (G blocks of B); in it extra j also sends its vector to every
 *           member of block j mod G (choice: extras are dealt round-robin), who reduce it in.
 *   nRgGaB  inverse of merge: the interior's last aB stage (G groups of B, stride N / B); in
 *           it, before the exchange, the B members of n-group j mod G also send their vector
 *           to extra j, who reduces those B vectors and so holds the result (its own vector
 *           is already in them). Between m and n: the interior's middle aB stages; the
 *           interior's bases (m, middle, n) multiply to N - R, so it has >= 2 stages. Choice:
 *           G x B must equal N - R in both (G is redundant; it is checked).
 *
 * Worked examples (x_r is rank r's vector, ".." a sum over a range):
 *   P = 6, "a3,a2" (Fig. 5, 17): stage 1 (stride 1): {0,1,2}, {3,4,5} exchange
 *     all-to-all, each holds x0..x2 or x3..x5; stage 2 (stride 3): pairs {0,3}, {1,4}, {2,5}
 *     exchange: everyone holds x0..x5. Two stages instead of recursive doubling's four.
 *   P = 7, "c6m2,a2,a2,e6m2" (Fig. 20, MPICH's fix): 0->1, 2->3, 4->5 (collapse); the group
 *     {1, 3, 5, 6} runs a2,a2 (pairs {1,3}, {5,6}; then {1,5}, {3,6}); 1->0, 3->2, 5->4.
 *   P = 7, "m1g2a3,n1g3a2" (Fig. 7, 21): stage 1: {0,1,2} and {3,4,5} exchange all-to-all
 *     and 6 sends x6 to 0, 1, 2: they hold x0..x2 + x6, the others x3..x5. Stage 2
 *     (stride 3): pairs {0,3}, {1,4}, {2,5} exchange, and 0 and 3 (n-group 0) also send to
 *     6: everyone holds x0..x6.
 *
 * Operand order: every reduction combines the values of a stage in virtual-rank order,
 * associated the same way on every rank (v_0 op (v_1 op (... op v_{B-1})), built with
 * source-left reductions), so results are bitwise identical on all ranks (seed 004 asks for
 * this). Factored and collapse schedules keep the rank order (a block covers consecutive
 * ranks); merges do not (the extras' vectors join a block in the middle): with a
 * non-commutative op (context->keep_order) a merge schedule is refused.
 * Scratch: (largest number of vectors a rank receives in one stage) x count elements; the
 * accumulator moves to the buffer of the last vector of a stage, so only the end may copy.
 * MPICH's recursive doubling is "a2,...,a2", or "c{2r}m2,a2,...,a2,e{2r}m2" with r = P - 2^k.
 * Default (empty string): see rm_default below.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../growth.h"
#include "../message.h"
#include "../schedule.h"

#define RM_MAX_STAGES 64
#define RM_MAX_BASE 1024
#define RM_DEFAULT_MAX_BASE 8 /* the largest base of a default schedule (paper: 2..8) */

typedef struct rm_stage {
    char kind;                  /* 'a', 'c', 'e', 'm', 'n' */
    int32_t threshold, base;    /* T (c, e) and B (all) */
    int32_t remaining, groups;  /* R and G (m, n) */
} rm_stage;

/* A group of processes, as the stages see it. */
typedef struct rm_level {
    char kind;          /* 'r' (all ranks), 'c' (made by a collapse), 'm' (a merge's interior) */
    int32_t size;       /* processes in the group */
    int32_t done;       /* product of the bases applied to it so far (the stride) */
    int32_t threshold, base, remaining, groups; /* of the stage that made it */
} rm_level;

typedef struct rm_parsed {
    rm_stage stages[RM_MAX_STAGES];
    int32_t count;
    int32_t merges;     /* > 0: operands are reordered */
} rm_parsed;

/* ---- parsing and checking ---------------------------------------------------------------- */

typedef struct rm_error {
    char *text;
    size_t size;
} rm_error;

/* A schedule the language rejects: the message, and PAPCOLL_ERR_ARGUMENT. */
#define refuse(error, ...) \
    message_write((error)->text, (error)->size, PAPCOLL_ERR_ARGUMENT, __VA_ARGS__)

/* A decimal number of 1..9 digits at *cursor; -1 if there is none. */
static int32_t read_number(const char **cursor) {
    const char *p = *cursor;
    int64_t value = 0;
    int32_t digits = 0;
    while (isdigit((unsigned char)*p) && digits < 10) value = value * 10 + (*p++ - '0'), digits++;
    if (digits == 0 || digits > 9) return -1;
    *cursor = p;
    return (int32_t)value;
}

/* One stage's text, e.g. "m1g2a3", into stage. */
static int parse_stage(const char *text, size_t length, int32_t index, rm_stage *stage,
                       rm_error *error) {
    char piece[48];
    if (length == 0)
        return refuse(error, "stage %d is empty (stages are separated by single commas)",
                      index + 1);
    if (length >= sizeof piece)
        return refuse(error, "stage %d '%.20s...' is too long", index + 1, text);
    memcpy(piece, text, length);
    piece[length] = '\0';
    memset(stage, 0, sizeof *stage);
    stage->kind = piece[0];
    const char *p = piece + 1;
    const char *shape = NULL;
    switch (piece[0]) {
    case 'a':
        stage->base = read_number(&p);
        shape = "aB";
        break;
    case 'c':
    case 'e':
        stage->threshold = read_number(&p);
        shape = piece[0] == 'c' ? "cTmB" : "eTmB";
        if (stage->threshold >= 0 && *p++ == 'm') stage->base = read_number(&p);
        else stage->base = -1;
        break;
    case 'm':
    case 'n':
        shape = piece[0] == 'm' ? "mRgGaB" : "nRgGaB";
        stage->remaining = read_number(&p);
        stage->groups = stage->base = -1;
        if (stage->remaining >= 0 && *p++ == 'g') {
            stage->groups = read_number(&p);
            if (stage->groups >= 0 && *p++ == 'a') stage->base = read_number(&p);
        }
        break;
    default:
        return refuse(error, "stage %d '%s': unknown instruction '%c' (expected aB, cTmB, "
                      "eTmB, mRgGaB or nRgGaB, e.g. a4,a3 or c6m2,a2,a2,e6m2)", index + 1,
                      piece, piece[0]);
    }
    if (stage->base < 0 || stage->threshold < 0 || stage->remaining < 0 || stage->groups < 0 ||
        *p != '\0')
        return refuse(error, "stage %d '%s': malformed, expected %s with decimal numbers "
                      "(at most 9 digits)", index + 1, piece, shape);
    if (stage->base < 2 || stage->base > RM_MAX_BASE)
        return refuse(error, "stage %d '%s': the base must be 2..%d, not %d", index + 1, piece,
                      RM_MAX_BASE, stage->base);
    return PAPCOLL_OK;
}

/* Walks the stages as the builder will, checking every rule. */
static int check_stages(const rm_parsed *parsed, int32_t ranks, rm_error *error) {
    rm_level stack[RM_MAX_STAGES + 1];
    int32_t depth = 0;
    stack[0] = (rm_level){'r', ranks, 1, 0, 0, 0, 0};
    for (int32_t i = 0; i < parsed->count; i++) {
        const rm_stage *s = &parsed->stages[i];
        rm_level *level = &stack[depth];
        const int32_t B = s->base, n = i + 1;
        switch (s->kind) {
        case 'a':
            if (level->done == level->size)
                return refuse(error, "stage %d 'a%d': the group of %d processes is already "
                              "fully reduced%s", n, B, level->size,
                              level->kind == 'c' ? " (close the collapse with eTmB)"
                              : level->kind == 'm' ? " (close the merge with nRgGaB)" : "");
            if ((level->size / level->done) % B != 0 && level->done == 1)
                return refuse(error, "stage %d 'a%d': a base of %d does not divide the group "
                              "of %d processes", n, B, B, level->size);
            if ((level->size / level->done) % B != 0)
                return refuse(error, "stage %d 'a%d': after bases multiplying to %d, %d of "
                              "the group's %d processes are left per block, which a base of %d "
                              "does not divide", n, B, level->done, level->size / level->done,
                              level->size, B);
            level->done *= B;
            if (level->kind == 'm' && level->done == level->size)
                return refuse(error, "stage %d 'a%d' completes the merge's interior of %d "
                              "processes: its last stage must be the nRgGaB", n, B, level->size);
            break;
        case 'c':
            if (level->done != 1)
                return refuse(error, "stage %d 'c%dm%d': a collapse must come first in its "
                              "group (bases multiplying to %d were applied before it)", n,
                              s->threshold, B, level->done);
            if (s->threshold % B != 0 || s->threshold < B || s->threshold > level->size)
                return refuse(error, "stage %d 'c%dm%d': the threshold must be a multiple of "
                              "the base %d between %d and the group size %d", n, s->threshold,
                              B, B, B, level->size);
            stack[++depth] = (rm_level){'c', s->threshold / B + level->size - s->threshold, 1,
                                        s->threshold, B, 0, 0};
            break;
        case 'e':
            if (level->kind != 'c' || level->threshold != s->threshold || level->base != B)
                return refuse(error, "stage %d 'e%dm%d' does not close a collapse c%dm%d (%s)",
                              n, s->threshold, B, s->threshold, B,
                              level->kind == 'c' ? "the innermost open collapse differs"
                              : level->kind == 'm' ? "a merge is open: close it with nRgGaB"
                                                   : "no collapse is open");
            if (level->done != level->size)
                return refuse(error, "stage %d 'e%dm%d': the collapsed group of %d processes "
                              "is not fully reduced (its bases multiply to %d)", n,
                              s->threshold, B, level->size, level->done);
            depth--;
            stack[depth].done = stack[depth].size;
            break;
        case 'm': {
            int32_t interior = level->size - s->remaining;
            if (level->done != 1)
                return refuse(error, "stage %d 'm%dg%da%d': a merge must come first in its "
                              "group (bases multiplying to %d were applied before it)", n,
                              s->remaining, s->groups, B, level->done);
            if (s->remaining < 1 || s->groups < 1 || (int64_t)s->groups * B != interior)
                return refuse(error, "stage %d 'm%dg%da%d': needs R >= 1 and G x B + R = the "
                              "group size %d (here %lld)", n, s->remaining, s->groups, B,
                              level->size, (long long)s->groups * B + s->remaining);
            if (B == interior)
                return refuse(error, "stage %d 'm%dg%da%d': the interior of %d processes needs "
                              "at least two stages (the m-stage and the n-stage)", n,
                              s->remaining, s->groups, B, interior);
            /* a block member receives B - 1 vectors plus its share of the extras */
            if ((int64_t)B - 1 + (s->remaining + s->groups - 1) / s->groups > RM_MAX_BASE)
                return refuse(error, "stage %d 'm%dg%da%d': a member of a block would receive "
                              "%lld vectors in one stage, more than %d", n, s->remaining,
                              s->groups, B,
                              (long long)B - 1 + (s->remaining + s->groups - 1) / s->groups,
                              RM_MAX_BASE);
            stack[++depth] = (rm_level){'m', interior, B, 0, 0, s->remaining, s->groups};
            break;
        }
        case 'n':
            if (level->kind != 'm' || level->remaining != s->remaining)
                return refuse(error, "stage %d 'n%dg%da%d' does not close a merge m%dg..a.. "
                              "(%s)", n, s->remaining, s->groups, B, s->remaining,
                              level->kind == 'm' ? "the open merge has another R"
                              : level->kind == 'c' ? "a collapse is open: close it with eTmB"
                                                   : "no merge is open");
            if ((int64_t)s->groups * B != level->size || (int64_t)level->done * B != level->size)
                return refuse(error, "stage %d 'n%dg%da%d' must be the interior's last stage: "
                              "G x B = %lld and the interior's bases so far (%d) x B = %lld "
                              "must both equal its %d processes", n, s->remaining, s->groups, B,
                              (long long)s->groups * B, level->done,
                              (long long)level->done * B, level->size);
            depth--;
            stack[depth].done = stack[depth].size;
            break;
        }
    }
    if (depth > 0)
        return refuse(error, "the %s opened by a stage is never closed (add %s)",
                      stack[depth].kind == 'c' ? "collapse" : "merge",
                      stack[depth].kind == 'c' ? "eTmB" : "nRgGaB");
    if (stack[0].done != ranks)
        return refuse(error, "the stages multiply to %d, not P = %d", stack[0].done, ranks);
    return PAPCOLL_OK;
}

static int rm_parse(const char *text, int32_t ranks, rm_parsed *parsed, rm_error *error) {
    memset(parsed, 0, sizeof *parsed);
    const char *p = text ? text : "";
    while (*p == ' ') p++;
    if (*p == '\0') return refuse(error, "empty schedule");
    for (;;) {
        const char *end = p;
        while (*end && *end != ',') end++;
        const char *last = end;
        while (last > p && last[-1] == ' ') last--;
        if (parsed->count == RM_MAX_STAGES)
            return refuse(error, "more than %d stages", RM_MAX_STAGES);
        int status = parse_stage(p, (size_t)(last - p), parsed->count,
                                 &parsed->stages[parsed->count], error);
        if (status != PAPCOLL_OK) return status;
        parsed->merges += parsed->stages[parsed->count].kind == 'm';
        parsed->count++;
        if (*end == '\0') break;
        p = end + 1;
        while (*p == ' ') p++;
    }
    return check_stages(parsed, ranks, error);
}

/* ---- default schedules ---------------------------------------------------------------- */

/* The factorisation of n into bases 2..max_base with the fewest stages, then the smallest
 * sum of bases (a stage costs about alpha_p + (B - 1) alpha_r), bases in falling order.
 * Returns the number of bases (0 for n = 1), -1 if n has a prime factor above max_base. */
static int32_t best_factors(int32_t n, int32_t max_base, int32_t limit, int32_t *bases) {
    if (n == 1) return 0;
    int32_t best = -1, best_sum = 0, trial[32];
    for (int32_t b = max_base < n ? max_base : n; b >= 2; b--) {
        if (n % b != 0 || limit <= 0) continue;
        int32_t rest = best_factors(n / b, b, limit - 1, trial + 1);
        if (rest < 0 || (rest == 0 && n / b != 1)) continue;
        trial[0] = b;
        int32_t sum = 0;
        for (int32_t i = 0; i <= rest; i++) sum += trial[i];
        if (best < 0 || rest + 1 < best || (rest + 1 == best && sum < best_sum)) {
            best = rest + 1;
            best_sum = sum;
            memcpy(bases, trial, (size_t)best * sizeof *bases);
        }
    }
    return best < 0 ? -1 : best;
}

static size_t append_text(char *text, size_t size, size_t used, const char *format, int32_t a,
                          int32_t b) {
    int written = snprintf(used < size ? text + used : NULL, used < size ? size - used : 0,
                           format, a, b);
    return used + (written > 0 ? (size_t)written : 0);
}

static size_t write_bases(char *text, size_t size, size_t used, const int32_t *bases,
                          int32_t count) {
    for (int32_t i = 0; i < count; i++)
        used = append_text(text, size, used, i ? ",a%d" : "a%d", bases[i], 0);
    return used;
}

/* Collapse pairs (MPICH's fix) down to `inner` processes around `bases`. */
static size_t write_collapsed(char *text, size_t size, int32_t ranks, int32_t inner,
                              const int32_t *bases, int32_t count) {
    size_t used = 0;
    if (inner == ranks) used = write_bases(text, size, 0, bases, count);
    else {
        int32_t threshold = 2 * (ranks - inner);
        used = append_text(text, size, 0, "c%dm%d,", threshold, 2);
        used = write_bases(text, size, used, bases, count);
        used = append_text(text, size, used, ",e%dm%d", threshold, 2);
    }
    if (size > 0 && used >= size) text[size - 1] = '\0';
    else if (size > 0 && used == 0) text[0] = '\0';
    return used;
}

/* Default: P's factorisation into bases <= 8 with the fewest stages; if P has a larger prime
 * factor, MPICH's pairwise collapse down to the largest 8-smooth number below P (always at
 * least P / 2, as a power of two is), factorised the same way. */
size_t papcoll_rm_default(int32_t ranks, char *text, size_t size) {
    int32_t bases[32] = {0};
    if (ranks <= 1) return write_collapsed(text, size, 1, 1, bases, 0);
    for (int32_t inner = ranks; inner >= 1; inner--) {
        int32_t count = best_factors(inner, RM_DEFAULT_MAX_BASE, 32, bases);
        if (count >= 0 && 2 * (int64_t)inner >= ranks)
            return write_collapsed(text, size, ranks, inner, bases, count);
    }
    return 0; /* not reached: a power of two always qualifies */
}

size_t papcoll_rm_recursive_doubling(int32_t ranks, char *text, size_t size) {
    int32_t bases[32], count = 0, power = ranks < 1 ? 1 : sched_floor_power_of_two(ranks);
    for (int32_t p = power; p > 1; p /= 2) bases[count++] = 2;
    return write_collapsed(text, size, ranks < 1 ? 1 : ranks, power, bases, count);
}

int papcoll_rm_check(const char *schedule, int32_t ranks, int32_t *reorders, char *error,
                     size_t error_size) {
    rm_error sink = {error, error_size};
    if (error && error_size) error[0] = '\0';
    if (ranks < 1) return refuse(&sink, "the number of ranks must be >= 1");
    if (reorders) *reorders = 0;
    if (ranks == 1 && (schedule == NULL || schedule[strspn(schedule, " ")] == '\0'))
        return PAPCOLL_OK; /* one rank: nothing to do, the empty schedule */
    rm_parsed parsed;
    int status = rm_parse(schedule, ranks, &parsed, &sink);
    if (reorders) *reorders = status == PAPCOLL_OK && parsed.merges > 0;
    return status;
}

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
    int32_t taken[RM_MAX_BASE + 1], values[2 * RM_MAX_BASE + 2], received = 0, n = 0;
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
    int32_t depth = 0, values[RM_MAX_BASE + 1];
    int32_t *extras = malloc((size_t)ranks * sizeof *extras);
    if (extras == NULL) return sched_fail(b->out, PAPCOLL_ERR_NO_MEMORY, "out of memory");
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
                int32_t extra_count = 0;
                for (int32_t e = 0; e < s->remaining; e++)
                    if (e % s->groups == v / B)
                        extras[extra_count++] = real_rank(levels, depth, interior + e);
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
                for (int32_t e = 0; e < levels[depth - 1].size - interior; e++)
                    if (e % s->groups == v % stride)
                        send_region(b, real_rank(levels, depth - 1, interior + e), tag,
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
                inner = blocks + v - s->threshold;
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
            levels[depth + 1] = (rm_level){'c', blocks + levels[depth].size - s->threshold, 1,
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
    free(extras);
    return b->failed ? sched_fail(b->out, PAPCOLL_ERR_NO_MEMORY, "out of memory") : PAPCOLL_OK;
}

static int recursive_multiplying_build(int32_t ranks, int32_t rank, int64_t count,
                                       int32_t elem_size, const papcoll_context *context,
                                       papcoll_schedule *out) {
    (void)elem_size;
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
    b.scratch = parsed.count ? sched_add_scratch(out, (int64_t)(b.region_count - 1) * count) : -1;
    b.regions = calloc((size_t)b.region_count, sizeof *b.regions);
    if (b.regions == NULL) return sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory");
    for (int32_t r = 0; r < b.region_count; r++) b.regions[r].writer = SCHED_NONE;
    /* the send buffer is read once, first, so MPI_IN_PLACE is safe */
    int32_t copy = sched_copy(out, SCHED_SEND_REGION(0, count), SCHED_RECV_REGION(0, count),
                              SCHED_FIRST);
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
            "seed 004 Section 4 (schedule language of Section 4.2), Table 2, Figs. 5-7 and "
            "17-22",
        .limitations =
            "the schedule's bases must multiply to P (see `papcoll schedules`); merge schedules"
            " (mRgGaB / nRgGaB) reorder operands and are refused for a non-commutative op; "
            "scratch: (most vectors received in one stage) x count",
    },
    .build = recursive_multiplying_build,
};
