/* test_algorithms.c - every registered algorithm, verified for every P in 1..64, the counts
 * {0, 1, P-1, P, P+1, 1009, 2^20+3} and element sizes {1, 4, 8}; plus the properties each
 * algorithm promises: ring meets the bandwidth lower bound when P divides count, the round
 * counts of recursive doubling and Rabenseifner, operand order where it is claimed. */
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

int main(void) {
    const int32_t elem_sizes[] = {1, 4, 8};
    for (int32_t a = 0; a < papcoll_algorithm_count(); a++) {
        papcoll_algorithm_info info;
        papcoll_algorithm_get(a, &info);
        int before = failures;
        for (int32_t ranks = 1; ranks <= 64; ranks++) {
            const int64_t counts[] = {0, 1, ranks - 1, ranks, ranks + 1, 1009, (1 << 20) + 3};
            for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
                for (size_t e = 0; e < 3; e++) {
                    int64_t count = counts[c];
                    int32_t elem_size = elem_sizes[e];
                    papcoll_verify_options options = {0, 1};
                    papcoll_verify_report report;
                    char error[256];
                    int status = papcoll_verify(info.name, ranks, count, elem_size, NULL, &options,
                                                &report, error, sizeof error);
                    expect(status == PAPCOLL_OK, info.name, ranks, count, elem_size,
                           "could not build:", error);
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
                    expect(report.max_bytes_sent >= report.lower_bound_bytes ||
                               report.max_bytes_received >= report.lower_bound_bytes,
                           info.name, ranks, count, elem_size,
                           "moves less than the lower bound allows", detail);
                    if (strcmp(info.name, "ring") == 0 && count % ranks == 0)
                        expect(report.max_bytes_sent == report.lower_bound_bytes, info.name,
                               ranks, count, elem_size, "should meet the lower bound exactly",
                               detail);
                }
        }
        printf("%s %s\n", failures == before ? "ok  " : "FAIL", info.name);
    }
    printf("%d passed, %d failed\n", checks - failures, failures);
    return failures ? 1 : 0;
}
