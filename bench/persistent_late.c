/* persistent_late.c - papcoll-persistent-late: a persistent all-reduce with late ranks:
 * papcoll's persistent auto, which learns the pattern from its own starts,
 * against blocking auto (the communicator's monitor) and MPI's own MPI_Allreduce_init.
 *
 * Each call: two barriers, then the late rank sleeps --delay-ms (one-late: the last rank
 * every call; rand-late: a rank drawn per call from --seed, the same on every rank), then
 * the timed call (float sum of --bytes per rank), completed at once. Contenders are
 * interleaved call by call, the order rotating, each on its own communicator:
 *   persistent-auto   papcoll_allreduce_init once, papcoll_start + papcoll_wait per call;
 *   auto              papcoll_allreduce (blocking) on a papcoll communicator;
 *   native            MPI_Allreduce_init once, MPI_Start + MPI_Wait per call.
 * Per call and contender: e-bar (mean over ranks of the time from arrival to exit) and
 * e-bar_lo (mean over ranks of a_last - a_i, plus delta, one point-to-point transfer of the
 * vector), arrivals on rank 0's clock (the library's clock offsets), gathered once at the
 * end. For persistent-auto also what it ran and whether it decided from arrivals, and the
 * calls until it settled: the first call from which its choice never changed again.
 * Every contender's last result is checked against MPI_Allreduce.
 *
 * Output: a line per contender (median excess over e-bar_lo after --warmup calls, median
 * e-bar, in ms), and with --json FILE every call.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_timing.h"
#include "clock_offsets.h"
#include "common/sleep.h"
#include "common/statistics.h"
#include "papcoll.h"

enum { CONTENDERS = 3, CLOCK_TAG = 9 };
static const char *names[CONTENDERS] = {"persistent-auto", "auto", "native"};

static int rank, ranks;


static void fail(const char *what) {
    fprintf(stderr, "papcoll-persistent-late: rank %d: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    long bytes = 1 << 20;
    double delay_ms = 1.0;
    int calls = 40, warmup = 5, random_late = 0;
    unsigned seed = 1;
    const char *json_path = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--bytes") == 0) bytes = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--delay-ms") == 0) delay_ms = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--calls") == 0) calls = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--warmup") == 0) warmup = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--seed") == 0) seed = (unsigned)atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--json") == 0) json_path = argv[i + 1];
        else if (strcmp(argv[i], "--mode") == 0 && (strcmp(argv[i + 1], "one-late") == 0 ||
                                                    strcmp(argv[i + 1], "rand-late") == 0))
            random_late = strcmp(argv[i + 1], "rand-late") == 0;
        else fail("usage: --bytes B --mode one-late|rand-late --delay-ms D --calls N "
                  "--warmup W --seed S --json FILE");
    }
    if (bytes < 4 || calls < 1 || warmup < 0 || warmup >= calls || delay_ms < 0)
        fail("--bytes >= 4, --calls >= 1, 0 <= --warmup < --calls, --delay-ms >= 0");
    int count = (int)(bytes / 4);
    float *input = malloc((size_t)count * sizeof *input);
    float *output[CONTENDERS], *reference = malloc((size_t)count * sizeof *reference);
    for (int i = 0; i < count; i++) input[i] = (float)((rank + i) % 5);
    for (int c = 0; c < CONTENDERS; c++) output[c] = malloc((size_t)count * sizeof(float));
    MPI_Allreduce(input, reference, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double own_offset = 0; /* MPI_Wtime() + own_offset: rank 0's clock */
    clock_offsets_measure(MPI_COMM_WORLD, CLOCK_TAG, &own_offset, NULL, NULL);
    double delta_ms = point_to_point_ms(output[0], count, MPI_FLOAT);

    papcoll_comm *persistent_comm, *blocking_comm;
    papcoll_persistent *persistent;
    MPI_Comm native_comm;
    MPI_Request native;
    if (papcoll_comm_create(MPI_COMM_WORLD, NULL, &persistent_comm) != MPI_SUCCESS ||
        papcoll_comm_create(MPI_COMM_WORLD, NULL, &blocking_comm) != MPI_SUCCESS ||
        papcoll_allreduce_init(persistent_comm, input, output[0], count, MPI_FLOAT, MPI_SUM,
                               &persistent) != MPI_SUCCESS)
        fail("papcoll set-up failed");
    MPI_Comm_dup(MPI_COMM_WORLD, &native_comm);
    MPI_Allreduce_init(input, output[2], count, MPI_FLOAT, MPI_SUM, native_comm, MPI_INFO_NULL,
                       &native);

    double *times = malloc((size_t)calls * CONTENDERS * 2 * sizeof *times); /* arrive, exit */
    int *from_arrivals = calloc((size_t)calls, sizeof *from_arrivals);
    char (*ran)[64] = calloc((size_t)calls, sizeof *ran);
    srand(seed);
    for (int k = 0; k < calls; k++) {
        int late = random_late ? rand() % ranks : ranks - 1;
        for (int j = 0; j < CONTENDERS; j++) {
            int c = (j + k) % CONTENDERS;
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == late) sleep_ms(delay_ms);
            double arrived = MPI_Wtime();
            int code = MPI_SUCCESS;
            if (c == 0) {
                MPI_Request request;
                code = papcoll_start(persistent, &request);
                if (code == MPI_SUCCESS) code = papcoll_wait(&request, MPI_STATUS_IGNORE);
            } else if (c == 1) {
                code = papcoll_allreduce(blocking_comm, input, output[1], count, MPI_FLOAT,
                                         MPI_SUM);
            } else {
                code = MPI_Start(&native);
                if (code == MPI_SUCCESS) code = MPI_Wait(&native, MPI_STATUS_IGNORE);
            }
            double left = MPI_Wtime();
            if (code != MPI_SUCCESS) fail(papcoll_error_string(code));
            times[(k * CONTENDERS + c) * 2] = (arrived + own_offset) * 1e3;
            times[(k * CONTENDERS + c) * 2 + 1] = (left + own_offset) * 1e3;
        }
        papcoll_choice choice;
        papcoll_persistent_last_choice(persistent, &choice, NULL);
        from_arrivals[k] = choice.from_arrivals;
        snprintf(ran[k], sizeof ran[k], "%s", choice.algorithm);
    }
    for (int c = 0; c < CONTENDERS; c++)
        if (memcmp(output[c], reference, (size_t)count * sizeof(float)) != 0) {
            char what[96];
            snprintf(what, sizeof what, "%s's result differs from MPI_Allreduce's", names[c]);
            fail(what);
        }
    double *all = rank == 0 ? malloc((size_t)ranks * calls * CONTENDERS * 2 * sizeof *all) : NULL;
    MPI_Gather(times, calls * CONTENDERS * 2, MPI_DOUBLE, all, calls * CONTENDERS * 2,
               MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        int settled = 0; /* the first call from which persistent-auto's choice held */
        for (int k = 1; k < calls; k++)
            if (strcmp(ran[k], ran[k - 1]) != 0) settled = k;
        FILE *json = json_path ? fopen(json_path, "w") : NULL;
        if (json) fprintf(json, "{\"ranks\": %d, \"bytes\": %ld, \"mode\": \"%s\", "
                          "\"delay_ms\": %g, \"delta_ms\": %.6f, \"calls_to_settle\": %d, "
                          "\"rows\": [", ranks, bytes, random_late ? "rand-late" : "one-late",
                          delay_ms, delta_ms, settled + 1);
        double *arrivals = malloc((size_t)ranks * sizeof *arrivals);
        double *excess[CONTENDERS], *ebar[CONTENDERS];
        for (int c = 0; c < CONTENDERS; c++) {
            excess[c] = malloc((size_t)calls * sizeof(double));
            ebar[c] = malloc((size_t)calls * sizeof(double));
        }
        for (int k = 0; k < calls; k++)
            for (int c = 0; c < CONTENDERS; c++) {
                double sum = 0;
                for (int r = 0; r < ranks; r++) {
                    const double *at = &all[((size_t)r * calls * CONTENDERS + (size_t)k *
                                             CONTENDERS + (size_t)c) * 2];
                    arrivals[r] = at[0]; /* already on rank 0's clock */
                    sum += at[1] - at[0];
                }
                ebar[c][k] = sum / ranks;
                double lower = lower_bound_ms(arrivals, ranks, delta_ms);
                excess[c][k] = ebar[c][k] - lower;
                if (json) fprintf(json, "%s{\"call\": %d, \"contender\": \"%s\", "
                                  "\"ebar_ms\": %.6f, \"ebar_lo_ms\": %.6f%s%s%s}",
                                  k || c ? ", " : "", k, names[c], ebar[c][k], lower,
                                  c == 0 ? ", \"ran\": \"" : "", c == 0 ? ran[k] : "",
                                  c == 0 ? (from_arrivals[k] ? "\", \"from_arrivals\": true"
                                                             : "\", \"from_arrivals\": false")
                                         : "");
            }
        if (json) {
            fprintf(json, "]}\n");
            fclose(json);
        }
        printf("# P = %d, %ld bytes, %s, delay %.3g ms, delta %.3f ms, medians of calls %d-%d; "
               "persistent-auto settled from call %d (ran %s)\n", ranks, bytes,
               random_late ? "rand-late" : "one-late", delay_ms, delta_ms, warmup + 1, calls,
               settled + 1, ran[calls - 1]);
        printf("%-16s %12s %12s\n", "contender", "excess_ms", "ebar_ms");
        for (int c = 0; c < CONTENDERS; c++)
            printf("%-16s %12.4f %12.4f\n", names[c], median(excess[c] + warmup, calls - warmup, NULL),
                   median(ebar[c] + warmup, calls - warmup, NULL));
    }
    MPI_Request_free(&native);
    MPI_Comm_free(&native_comm);
    papcoll_persistent_free(&persistent);
    papcoll_comm_free(&persistent_comm);
    papcoll_comm_free(&blocking_comm);
    MPI_Finalize();
    return 0;
}
