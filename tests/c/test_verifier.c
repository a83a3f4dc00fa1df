/* test_verifier.c - the verifier must catch planted bugs, and pass what is correct.
 * Each case is a set of hand-written schedules in the text format of papcoll_schedule_dump. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "papcoll_core.h"

static int failures = 0, checks = 0;

/* Verifies the P schedules (texts[r] is rank r's) and checks the outcome: expected NULL means
 * "must pass", otherwise the violation reason must contain expected. */
static void check(const char *name, int ranks, const char *const *texts, int64_t eager_limit,
                  const char *expected) {
    papcoll_schedule *schedules[8] = {0};
    char error[256];
    papcoll_verify_report report;
    int status = PAPCOLL_OK;
    for (int r = 0; r < ranks && status == PAPCOLL_OK; r++)
        status = papcoll_schedule_parse(texts[r], &schedules[r], error, sizeof error);
    if (status == PAPCOLL_OK) {
        papcoll_verify_options options = {.eager_limit_bytes = eager_limit, .check_in_place = 1};
        status = papcoll_verify_schedules(schedules, ranks, &options, &report, error,
                                          sizeof error);
    }
    for (int r = 0; r < ranks; r++) papcoll_schedule_free(schedules[r]);
    int passed;
    if (status != PAPCOLL_OK) {
        passed = 0;
        printf("FAIL %s: could not verify: %s\n", name, error);
    } else if (expected == NULL) {
        passed = report.ok;
        printf("%s %s: %s\n", passed ? "ok  " : "FAIL", name, report.ok ? "passes" : report.reason);
    } else {
        passed = !report.ok && strstr(report.reason, expected) != NULL;
        printf("%s %s: %s\n", passed ? "ok  " : "FAIL", name,
               report.ok ? "was not caught" : report.reason);
    }
    failures += !passed;
    checks++;
}

static void check_parse_error(const char *name, const char *text, const char *expected) {
    papcoll_schedule *schedule = NULL;
    char error[256] = "";
    int status = papcoll_schedule_parse(text, &schedule, error, sizeof error);
    int passed = status != PAPCOLL_OK && schedule == NULL && strstr(error, expected) != NULL;
    printf("%s %s: %s\n", passed ? "ok  " : "FAIL", name, status == PAPCOLL_OK ? "parsed" : error);
    papcoll_schedule_free(schedule);
    failures += !passed;
    checks++;
}

/* A schedule printed, parsed and printed again reads the same (flags included). */
static void check_round_trip(const char *name, const char *text) {
    papcoll_schedule *schedule = NULL;
    char error[256] = "", printed[1024] = "";
    int status = papcoll_schedule_parse(text, &schedule, error, sizeof error);
    if (status == PAPCOLL_OK) papcoll_schedule_dump(schedule, printed, sizeof printed);
    int passed = status == PAPCOLL_OK && strcmp(printed, text) == 0;
    printf("%s %s: %s\n", passed ? "ok  " : "FAIL", name, status != PAPCOLL_OK ? error : printed);
    papcoll_schedule_free(schedule);
    failures += !passed;
    checks++;
}

/* A correct 2-rank exchange: each rank sends its vector and adds the peer's. */
#define HEADER(rank) "schedule ranks=2 rank=" #rank " count=8 elem_size=4 scratch=8\n"
#define EXCHANGE(peer)                                    \
    "0 COPY send[0,8) -> recv[0,8)\n"                     \
    "1 SEND to=" #peer " tag=0 recv[0,8) after 0\n"       \
    "2 RECV from=" #peer " tag=0 scratch0[0,8)\n"
/* The correct schedule of rank `rank`, whose peer is `peer`: most cases plant their bug on
 * one rank and pair it with this one. */
#define CORRECT(rank, peer) \
    HEADER(rank) EXCHANGE(peer) "3 REDUCE scratch0[0,8) -> recv[0,8) after 2,1\n"
/* Sends, then receives only after its send completes: a deadlock when the peer does the
 * same and sends block until they are received (rendezvous). */
#define SEND_FIRST(rank, peer)                            \
    HEADER(rank) "0 COPY send[0,8) -> recv[0,8)\n"          \
    "1 SEND to=" #peer " tag=0 recv[0,8) after 0\n"          \
    "2 RECV from=" #peer " tag=0 scratch0[0,8) after 1\n"    \
    "3 REDUCE scratch0[0,8) -> recv[0,8) after 2\n"

/* The two-rank cases: rank 0's and rank 1's schedule, the eager limit (-1: every send is
 * eager, 0: none is), and NULL (must pass) or a part of the violation's reason. */
typedef struct two_rank_case {
    const char *name;
    const char *rank0, *rank1;
    int64_t eager_limit;
    const char *expected;
} two_rank_case;

static const two_rank_case cases[] = {
    {"correct exchange",
     CORRECT(0, 1),
     CORRECT(1, 0),
     0, NULL},
    {"double count",
     CORRECT(0, 1) "4 REDUCE scratch0[2,4) -> recv[2,4) after 3\n",
     CORRECT(1, 0),
     0, "contribution of rank 1 twice (element 2)"},
    {"dropped contribution",
     HEADER(0) EXCHANGE(1) "3 REDUCE scratch0[0,4) -> recv[0,4) after 2,1\n",
     CORRECT(1, 0),
     0, "element 4 misses the contribution of rank 1"},
    {"mismatched lengths",
     HEADER(0) "0 COPY send[0,8) -> recv[0,8)\n1 SEND to=1 tag=0 recv[0,8) after 0\n"
         "2 RECV from=1 tag=0 scratch0[0,8)\n"
         "3 REDUCE scratch0[0,8) -> recv[0,8) after 2,1\n",
     HEADER(1) "0 COPY send[0,8) -> recv[0,8)\n1 SEND to=0 tag=0 recv[0,8) after 0\n"
         "2 RECV from=0 tag=0 scratch0[0,7)\n"
         "3 REDUCE scratch0[0,8) -> recv[0,8) after 2,1\n",
     0, "RECV of 7 elements from rank 0"},
    {"send-first, one side waits for its send (rendezvous)",
     CORRECT(0, 1),
     SEND_FIRST(1, 0),
     0, NULL},
    {"both send first, eager",
     SEND_FIRST(0, 1),
     SEND_FIRST(1, 0),
     -1, NULL},
    {"both send first, rendezvous",
     SEND_FIRST(0, 1),
     SEND_FIRST(1, 0),
     0, "deadlock"},
    {"both send first, 32-byte messages under a 16-byte eager limit",
     SEND_FIRST(0, 1),
     SEND_FIRST(1, 0),
     16, "deadlock"},
    {"reduce overwrites what an in-flight send reads",
     HEADER(0) EXCHANGE(1) "3 REDUCE scratch0[0,8) -> recv[0,8) after 2,0\n",
     CORRECT(1, 0),
     0, "race: REDUCE and op 1 (SEND)"},
    {"reduce into the memory a send still reads, with MPI_IN_PLACE",
     HEADER(0) "0 SEND to=1 tag=0 send[0,8)\n1 RECV from=1 tag=0 scratch0[0,8)\n"
         "2 COPY send[0,8) -> recv[0,8)\n3 REDUCE scratch0[0,8) -> recv[0,8) after 1,2\n",
     CORRECT(1, 0),
     0, "with MPI_IN_PLACE: rank 0 op 3: race: REDUCE and op 0 (SEND)"},
    {"scratch access beyond its declared size",
     HEADER(0) EXCHANGE(1) "3 REDUCE scratch0[1,9) -> recv[0,8) after 2,1\n",
     CORRECT(1, 0),
     0, "scratch0[1,9) lies outside the buffer of 8 elements"},
    {"send without a receive",
     CORRECT(0, 1) "4 SEND to=1 tag=5 recv[0,8) after 3\n",
     CORRECT(1, 0),
     0, "SEND to rank 1 tag 5 has no matching RECV"},
    {"two unordered sends on one peer and tag",
     "schedule ranks=2 rank=0 count=8 elem_size=4 scratch=\n"
        "0 COPY send[0,8) -> recv[0,8)\n1 SEND to=1 tag=0 recv[0,4) after 0\n"
        "2 SEND to=1 tag=0 recv[4,8) after 0\n3 RECV from=1 tag=0 recv[0,8) after 1,2\n",
     "schedule ranks=2 rank=1 count=8 elem_size=4 scratch=8\n"
        "0 RECV from=0 tag=0 scratch0[0,4)\n1 RECV from=0 tag=0 scratch0[4,8) after 0\n"
        "2 COPY send[0,8) -> recv[0,8)\n3 REDUCE scratch0[0,8) -> recv[0,8) after 0,1,2\n"
        "4 SEND to=0 tag=0 recv[0,8) after 3\n",
     0, "could match them either way"},
    {"target-left order is still a correct (commutative) result",
     HEADER(0) EXCHANGE(1) "3 REDUCE scratch0[0,8) -> recv[0,8) order=target-left after 2,1\n",
     CORRECT(1, 0),
     0, NULL},
    {"reduce before the receive completes",
     HEADER(0) EXCHANGE(1) "3 REDUCE scratch0[0,8) -> recv[0,8) after 1\n",
     CORRECT(1, 0),
     0, "race"},
};

/* Texts whose numbers would overflow 64-bit arithmetic in the parser or the verifier, or
 * wrap when narrowed: each must be refused with its line and field named. */
#define ONE_RANK(count, elem_size, scratch) \
    "schedule ranks=1 rank=0 count=" count " elem_size=" elem_size " scratch=" scratch "\n"
#define INT64_MAX_TEXT "9223372036854775807"
typedef struct parse_error_case {
    const char *name, *text, *expected;
} parse_error_case;

static const parse_error_case overflow_cases[] = {
    {"region from INT64_MIN to INT64_MAX (end - start overflows)",
     ONE_RANK("8", "4", "8") "0 COPY send[-9223372036854775808," INT64_MAX_TEXT ") -> recv[0,8)\n",
     "line 2: expected a region start >= 0"},
    {"negative region start",
     ONE_RANK("8", "4", "8") "0 COPY send[0,8) -> scratch0[-1,7)\n",
     "line 2: expected a region start >= 0"},
    {"region end that does not fit 64 bits",
     ONE_RANK("8", "4", "8") "0 COPY send[0,99999999999999999999) -> recv[0,8)\n",
     "line 2: expected region end near '99999999999999999999'"},
    {"count x elem_size past 2^63-1",
     ONE_RANK(INT64_MAX_TEXT, "4", "") "0 COPY send[0,8) -> recv[0,8)\n",
     "line 1: expected count x elem_size within 2^63-1 bytes"},
    {"count x elem_size just past 2^63-1",
     ONE_RANK("4294967299", "2147483647", "") "0 COPY send[0,8) -> recv[0,8)\n",
     "line 1: expected count x elem_size within 2^63-1 bytes"},
    {"count that does not fit 64 bits",
     ONE_RANK("99999999999999999999", "4", ""), "line 1: expected count near '9999"},
    {"scratch size x elem_size past 2^63-1",
     ONE_RANK("8", "4", "8," INT64_MAX_TEXT) "0 COPY send[0,8) -> recv[0,8)\n",
     "line 1: expected a scratch size >= 0 whose bytes (x elem_size) fit 2^63-1"},
    {"negative scratch size",
     ONE_RANK("8", "4", "-5") "0 COPY send[0,8) -> recv[0,8)\n",
     "line 1: expected a scratch size >= 0"},
    {"scratch size that does not fit 64 bits",
     ONE_RANK("8", "4", "99999999999999999999"), "line 1: expected a scratch size near '9999"},
    {"more scratch buffers than the limit, and no ops",
     ONE_RANK("8", "4", "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1"),
     "line 1: more than 32 scratch buffers"},
    {"result region at INT64_MAX",
     "schedule ranks=1 rank=0 count=8 elem_size=4 scratch= result=" INT64_MAX_TEXT
     "," INT64_MAX_TEXT "\n",
     "line 1: expected a result region inside the receive buffer"},
    {"dependency 2^32 (would wrap to op 0)",
     ONE_RANK("8", "4", "") "0 COPY send[0,8) -> recv[0,8)\n"
     "1 COPY send[0,8) -> recv[0,8) after 4294967296\n",
     "line 3: expected an op index in 0..2^31-1"},
    {"dependency -1 (would read as no dependency)",
     ONE_RANK("8", "4", "") "0 COPY send[0,8) -> recv[0,8)\n"
     "1 COPY send[0,8) -> recv[0,8) after 0,-1\n",
     "line 3: expected an op index in 0..2^31-1"},
    {"op index 2^32",
     ONE_RANK("8", "4", "") "4294967296 COPY send[0,8) -> recv[0,8)\n",
     "line 2: expected ops numbered 0, 1, 2"},
    {"peer 2^32",
     "schedule ranks=2 rank=0 count=8 elem_size=4 scratch=\n0 SEND to=4294967297 tag=0 "
     "send[0,8)\n",
     "line 2: expected peer and tag within 0 .. 2^31-1"},
};

/* Byte counts past 2^63-1 in the report saturate: two sends of ~2^63 bytes each. */
static void check_saturated_report(void) {
#define HUGE_COUNT "2305843009213693951" /* x 4 bytes = 2^63 - 4 */
    const char *texts[] = {
        "schedule ranks=2 rank=0 count=" HUGE_COUNT " elem_size=4 scratch=\n"
        "0 SEND to=1 tag=0 send[0," HUGE_COUNT ")\n"
        "1 SEND to=1 tag=1 send[0," HUGE_COUNT ") after 0\n",
        "schedule ranks=2 rank=1 count=" HUGE_COUNT " elem_size=4 scratch=\n"
        "0 RECV from=0 tag=0 recv[0," HUGE_COUNT ")\n"
        "1 RECV from=0 tag=1 recv[0," HUGE_COUNT ") after 0\n"};
#undef HUGE_COUNT
    papcoll_schedule *schedules[2] = {0};
    char error[256] = "";
    papcoll_verify_report report;
    int status = papcoll_schedule_parse(texts[0], &schedules[0], error, sizeof error);
    if (status == PAPCOLL_OK)
        status = papcoll_schedule_parse(texts[1], &schedules[1], error, sizeof error);
    if (status == PAPCOLL_OK)
        status = papcoll_verify_schedules(schedules, 2, NULL, &report, error, sizeof error);
    int passed = status == PAPCOLL_OK && report.max_bytes_sent == INT64_MAX &&
                 report.total_bytes_sent == INT64_MAX && report.max_bytes_received == INT64_MAX;
    printf("%s byte counts past 2^63-1 saturate: %s\n", passed ? "ok  " : "FAIL",
           status != PAPCOLL_OK ? error : passed ? "INT64_MAX" : "wrong counts");
    papcoll_schedule_free(schedules[0]);
    papcoll_schedule_free(schedules[1]);
    failures += !passed;
    checks++;
}

int main(void) {
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const char *texts[] = {cases[c].rank0, cases[c].rank1};
        check(cases[c].name, 2, texts, cases[c].eager_limit, cases[c].expected);
    }
    check_parse_error("garbage", "hello", "expected schedule");
    check_parse_error("unknown op", HEADER(0) "0 JUMP to=1\n", "SEND, RECV, REDUCE or COPY");
    check_parse_error("forward dependency", HEADER(0) "0 COPY send[0,8) -> recv[0,8) after 3\n",
                      "does not precede it");
    check_parse_error("peer out of range", HEADER(0) "0 SEND to=7 tag=0 send[0,8)\n",
                      "peer 7 is not another rank");
    check_parse_error("reversed region", HEADER(0) "0 SEND to=1 tag=0 send[5,2)\n",
                      "end is not before");
    for (size_t c = 0; c < sizeof overflow_cases / sizeof *overflow_cases; c++)
        check_parse_error(overflow_cases[c].name, overflow_cases[c].text,
                          overflow_cases[c].expected);
    check_round_trip("a paced send prints back paced",
                     HEADER(0) "0 SEND to=1 tag=0 send[0,4) paced\n"
                               "1 SEND to=1 tag=0 send[4,8) paced after 0\n"
                               "2 RECV from=1 tag=0 recv[0,8)\n");
    check_parse_error("a paced receive", HEADER(0) "0 RECV from=1 tag=0 recv[0,8) paced\n",
                      "the end of the line");
    check_saturated_report();
    printf("%d passed, %d failed\n", checks - failures, failures);
    return failures ? 1 : 0;
}
