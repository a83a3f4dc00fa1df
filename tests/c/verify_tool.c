/* verify_tool ALGORITHM P COUNT [ELEM_SIZE]: verifies one algorithm, prints the report,
 * exits 0 only if every property holds. A developer's tool (the user's is `papcoll verify`). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "papcoll_core.h"

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s ALGORITHM P COUNT [ELEM_SIZE]\n", argv[0]);
        return 2;
    }
    int32_t ranks = atoi(argv[2]);
    int64_t count = strtoll(argv[3], NULL, 10);
    int32_t elem_size = argc > 4 ? atoi(argv[4]) : 4;
    papcoll_verify_options options = {.eager_limit_bytes = 0, .check_in_place = 1};
    papcoll_verify_report report;
    char error[256];
    int status = papcoll_verify(argv[1], ranks, count, elem_size, NULL, &options, &report,
                                error, sizeof error);
    if (status != PAPCOLL_OK) {
        fprintf(stderr, "error: %s\n", error);
        return 2;
    }
    printf("%s P=%d count=%" PRId64 " ok=%d rounds=%d order_preserved=%d max_bytes_sent=%" PRId64
           " lower_bound_bytes=%" PRId64 " max_ops=%" PRId64 " scratch=%" PRId64 "%s%s\n",
           argv[1], ranks, count, report.ok, report.rounds, report.order_preserved,
           report.max_bytes_sent, report.lower_bound_bytes, report.max_ops,
           report.max_scratch_elements, report.ok ? "" : " reason: ", report.reason);
    return report.ok ? 0 : 1;
}
