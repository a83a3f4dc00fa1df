/* test_algorithms.c - every registered algorithm, verified at the P of pattern_ranks (every
 * P in 1..64 with --all-counts, make test-long), the counts {0, 1, P-1, P, P+1, 1009,
 * 2^20+3} and element sizes {1, 4, 8} (fewer for the other arrival and group patterns but
 * with --all-counts); plus the properties each
 * algorithm promises: ring meets the bandwidth lower bound when P divides count, the round
 * counts of recursive doubling and Rabenseifner, operand order where it is claimed.
 * The PAP-aware algorithms (slt, prr) are verified under many arrival patterns each: all
 * equal, one late by a little and by a lot, reversed, random, ties, extreme values; the
 * hierarchical ones (hr1, hr2, smp_*) under group layouts: blocks, round robin, one group,
 * one rank per group, uneven random groups. */
#include <float.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "papcoll_core.h"

static int failures = 0, checks = 0;

static void expect(int condition, const char *algorithm, int32_t ranks, int64_t count,
                   int32_t elem_size, const char *what, const char *detail) {
    checks++;
    if (condition) return;
    failures++;
    if (failures <= 50)
        printf("FAIL %s P=%d count=%" PRId64 " elem_size=%d: %s %s\n", algorithm, ranks, count,
               elem_size, what, detail);
}

static int log2_floor(int32_t n) {
    int bits = 0;
    while ((1 << (bits + 1)) <= n) bits++;
    return bits;
}

enum { PATTERN_COUNT = 8 };
static const char *const pattern_names[PATTERN_COUNT] = {
    "all equal", "one late by tau/2", "one late by 10^6 tau", "reversed",
    "random",    "ties in pairs",     "extreme values",       "first late"};
static const double tau = 1e-4;

/* Arrival pattern `pattern` for P ranks, in seconds. */
static void arrival_pattern(int pattern, int32_t ranks, double *arrivals) {
    unsigned state = 12345u + (unsigned)ranks;
    for (int32_t r = 0; r < ranks; r++) {
        state = state * 1103515245u + 12345u;
        double random = (double)(state >> 8) / (double)(1u << 24);
        switch (pattern) {
        case 0: arrivals[r] = 1.0; break;
        case 1: arrivals[r] = r == ranks / 2 ? tau / 2 : 0; break;
        case 2: arrivals[r] = r == ranks - 1 ? 1e6 * tau : 0; break;
        case 3: arrivals[r] = (double)(ranks - r) * tau; break;
        case 4: arrivals[r] = random * 50 * tau; break;
        case 5: arrivals[r] = (double)(r / 2) * tau; break;
        case 6: arrivals[r] = r % 3 == 0 ? DBL_MAX : r % 3 == 1 ? -DBL_MAX : DBL_MIN; break;
        default: arrivals[r] = r == 0 ? 3 * tau : 0; break;
        }
    }
}

enum { GROUP_PATTERN_COUNT = 5 };
static const char *const group_pattern_names[GROUP_PATTERN_COUNT] = {
    "blocks of 3", "round robin over 4", "one group", "one group per rank", "uneven random"};

/* Group layout `pattern` for P ranks (ids need not be contiguous or sorted). */
static void group_pattern(int pattern, int32_t ranks, int32_t *groups) {
    unsigned state = 777u + (unsigned)ranks;
    for (int32_t r = 0; r < ranks; r++) {
        state = state * 1103515245u + 12345u;
        switch (pattern) {
        case 0: groups[r] = r / 3; break;
        case 1: groups[r] = r % 4; break;
        case 2: groups[r] = 7; break;
        case 3: groups[r] = ranks - r; break;
        default: groups[r] = (int32_t)((state >> 8) % 5) * 10; break;
        }
    }
}

/* The P every pattern is verified at in make test: all up to 16, then around the powers of
 * two and the largest (make test-long: every P to 64). The first pattern (all equal, or
 * blocks) runs them with every count and element size. Why: the patterns times 64 P were
 * 95 s of make test, and the first pattern alone at every P still 60 s (a ring-like
 * schedule has P^2 messages: P 17 - 64 held nearly all of it), with make test over its
 * 15-minute budget under Open MPI. */
static int pattern_ranks(int32_t ranks) {
    static const int32_t beyond_16[] = {17, 24, 31, 32, 33, 48, 63, 64};
    if (ranks <= 16) return 1;
    for (size_t k = 0; k < sizeof beyond_16 / sizeof beyond_16[0]; k++)
        if (beyond_16[k] == ranks) return 1;
    return 0;
}

int main(int argc, char **argv) {
    /* --all-counts (make test-long): every count and element size for every pattern */
    int all_counts = argc > 1 && strcmp(argv[1], "--all-counts") == 0;
    const int32_t elem_sizes[] = {1, 4, 8};
    double arrivals[64];
    int32_t groups[64];
    for (int32_t a = 0; a < papcoll_algorithm_count(); a++) {
        papcoll_algorithm_info info;
        papcoll_algorithm_get(a, &info);
        int before = failures;
        /* Arrival estimates matter only to the PAP-aware algorithms; the others ignore them. */
        int patterns = info.needs_arrivals ? PATTERN_COUNT : info.needs_groups ? GROUP_PATTERN_COUNT : 1;
        for (int pattern = 0; pattern < patterns; pattern++)
        for (int32_t ranks = 1; ranks <= 64; ranks++) {
            if (!all_counts && !pattern_ranks(ranks)) continue;
            const int64_t counts[] = {0, 1, ranks - 1, ranks, ranks + 1, 1009, (1 << 20) + 3};
            papcoll_context context;
            memset(&context, 0, sizeof context);
            arrival_pattern(pattern, ranks, arrivals);
            context.arrivals = arrivals;
            context.arrival_count = ranks;
            context.tau = tau;
            /* The hierarchical algorithms get group layouts instead of arrival patterns. */
            group_pattern(pattern, ranks, groups);
            context.groups = groups;
            context.group_count = info.needs_groups ? ranks : 0;
            /* The all-equal pattern gets every count and element size; the others (to keep
             * make test short) 4-byte elements and the counts 1, P-1, 1009, 2^20+3. */
            int full = pattern == 0 || all_counts;
            for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
                for (size_t e = full ? 0 : 1; e < (full ? 3u : 2u); e++) {
                    if (!full && (c == 0 || c == 3 || c == 4)) continue;
                    int64_t count = counts[c];
                    int32_t elem_size = elem_sizes[e];
                    /* an algorithm that claims the canonical order must keep it in every
                     * case: the verifier then fails it where it does not */
                    papcoll_verify_options options = {
                        .eager_limit_bytes = 0, .check_in_place = 1,
                        .require_canonical_order = info.canonical_order};
                    papcoll_verify_report report;
                    char error[256];
                    int status = papcoll_verify(info.name, ranks, count, elem_size, &context,
                                                &options, &report, error, sizeof error);
                    /* the reduce-scatters refuse P that is not a power of two, and say so */
                    int power_of_two_p = (ranks & (ranks - 1)) == 0;
                    if (info.reduce_scatter && !power_of_two_p) {
                        expect(status == PAPCOLL_ERR_UNSUPPORTED &&
                                   strstr(error, "power of two") != NULL,
                               info.name, ranks, count, elem_size, "should refuse P:", error);
                        continue;
                    }
                    expect(status == PAPCOLL_OK, info.name, ranks, count, elem_size,
                           "could not build:", error);
                    if (info.needs_arrivals && (status != PAPCOLL_OK || !report.ok))
                        printf("  (arrival pattern: %s)\n", pattern_names[pattern]);
                    if (info.needs_groups && (status != PAPCOLL_OK || !report.ok))
                        printf("  (groups: %s)\n", group_pattern_names[pattern]);
                    if (status != PAPCOLL_OK) continue;
                    expect(report.ok, info.name, ranks, count, elem_size, "violation:",
                           report.reason);
                    if (!report.ok) continue;
                    if (!info.commutative_only)
                        expect(report.order_preserved, info.name, ranks, count, elem_size,
                               "claims order preservation but reorders", "");
                    int power_of_two = (ranks & (ranks - 1)) == 0;
                    int log2p = log2_floor(ranks);
                    char detail[64];
                    snprintf(detail, sizeof detail, "got %d rounds", report.rounds);
                    if (count >= ranks && strcmp(info.name, "recursive_doubling") == 0)
                        expect(report.rounds == log2p + (power_of_two ? 0 : 2), info.name, ranks,
                               count, elem_size, "rounds should be log2 P (+2 if not 2^k)",
                               detail);
                    if (count >= ranks && power_of_two && strcmp(info.name, "rabenseifner") == 0)
                        expect(report.rounds == 2 * log2p, info.name, ranks, count, elem_size,
                               "rounds should be 2 log2 P", detail);
                    snprintf(detail, sizeof detail, "sent %" PRId64 " bytes, bound %" PRId64,
                             report.max_bytes_sent, report.lower_bound_bytes);
                    /* a reduce-scatter needs half the all-reduce bound: (P-1)/P x n */
                    int64_t bound = info.reduce_scatter ? report.lower_bound_bytes / 2
                                                        : report.lower_bound_bytes;
                    expect(report.max_bytes_sent >= bound || report.max_bytes_received >= bound,
                           info.name, ranks, count, elem_size,
                           "moves less than the lower bound allows", detail);
                    int balanced_ring = strcmp(info.name, "prr") == 0 && pattern == 0;
                    if ((strcmp(info.name, "ring") == 0 || balanced_ring) && count % ranks == 0)
                        expect(report.max_bytes_sent == report.lower_bound_bytes, info.name,
                               ranks, count, elem_size, "should meet the lower bound exactly",
                               detail);
                }
        }
        printf("%s %s\n", failures == before ? "ok  " : "FAIL", info.name);
        fflush(stdout);
    }
    printf("%d passed, %d failed\n", checks - failures, failures);
    return failures ? 1 : 0;
}
