/* rm_language.c - recursive multiplying's schedule language (rm_language.h): the parser,
 * its checks, the default schedules and the public papcoll_rm_* functions. */
#include "rm_language.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "../../message.h"
#include "../../schedule.h"

/* ---- parsing and checking ---------------------------------------------------------------- */

/* A schedule the language rejects: the message, and PAPCOLL_ERR_ARGUMENT. */
#define refuse(error, ...) \
    message_write((error)->text, (error)->size, PAPCOLL_ERR_ARGUMENT, __VA_ARGS__)

/* A decimal number 0..INT32_MAX at *cursor; -1 if there is none or it is larger. Up to 10
 * digits, since a threshold or R near P = 2^31 - 1 has 10 (papcoll_rm_recursive_doubling
 * writes c2147483646m2 for it); 10 digits cannot overflow the int64_t they are summed in. */
static int32_t read_number(const char **cursor) {
    const char *p = *cursor;
    int64_t value = 0;
    int32_t digits = 0;
    while (isdigit((unsigned char)*p) && digits <= 10) value = value * 10 + (*p++ - '0'), digits++;
    if (digits == 0 || digits > 10 || value > INT32_MAX) return -1;
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
                      "(0 to 2147483647)", index + 1, piece, shape);
    if (stage->base < 2 || stage->base > PAPCOLL_RM_MAX_BASE)
        return refuse(error, "stage %d '%s': the base must be 2..%d, not %d", index + 1, piece,
                      PAPCOLL_RM_MAX_BASE, stage->base);
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
            /* T/B + size - T, subtracting first: size + T/B passes INT32_MAX near 2^31 */
            stack[++depth] = (rm_level){'c', level->size - (s->threshold - s->threshold / B), 1,
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
            if ((int64_t)B - 1 + (s->remaining + s->groups - 1) / s->groups > PAPCOLL_RM_MAX_BASE)
                return refuse(error, "stage %d 'm%dg%da%d': a member of a block would receive "
                              "%lld vectors in one stage, more than %d", n, s->remaining,
                              s->groups, B,
                              (long long)B - 1 + (s->remaining + s->groups - 1) / s->groups,
                              PAPCOLL_RM_MAX_BASE);
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

int rm_parse(const char *text, int32_t ranks, rm_parsed *parsed, rm_error *error) {
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

#define RM_DEFAULT_MAX_BASE 8 /* the largest base of a default schedule (paper: 2..8) */

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
