/* overlap.c - papcoll-overlap: how much of a non-blocking all-reduce hides behind
 * computation, measured the way OSU's osu_iallreduce does, with papcoll's
 * non-blocking all-reduce beside the MPI library's own MPI_Iallreduce in the same run.
 *
 * Per size and contender, interleaved (every iteration runs every contender in turn, so
 * drift hits all alike), medians over iterations of the slowest rank's times:
 *   pure      post, then wait at once: the communication alone;
 *   overall   post, compute for `pure` seconds (a busy loop; --tests K spreads K MPI_Test
 *             calls over it, OSU's -t), then wait;
 *   overlap   max(0, 100 - (overall - compute) / pure x 100): 100 % when the whole
 *             communication hid behind the compute, 0 % when none of it did.
 * Progress: PAPCOLL_PROGRESS=thread (MPI_Init_thread with MPI_THREAD_MULTIPLE) or calls.
 * MPICH's own progress thread for native: MPIR_CVAR_ASYNC_PROGRESS=1 (its environment).
 *
 * Usage: papcoll-overlap [--sizes BYTES,...] [--contenders native,auto,ring,...]
 *                        [--iterations N] [--warmup N] [--tests K] [--wait mpi|papcoll]
 * --wait: how papcoll's requests are completed: MPI_Wait where MPI advances papcoll (the
 * default; else papcoll_wait), or always papcoll_wait.
 * Prints one line per (size, contender): bytes contender pure_us compute_us overall_us
 * overlap_percent and, for papcoll's, what it ran (auto's last choice: "native" means
 * MPI_Iallreduce itself inside papcoll's operation), and a JSON line per row prefixed with
 * "json ". */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/progress_setting.h"
#include "common/statistics.h"
#include "papcoll.h"

enum { MOST_CONTENDERS = 8, MOST_SIZES = 8 };

static int rank, ranks;


/* Busy for `seconds`, with `tests` MPI_Test calls on request spread over it. */
static void compute(double seconds, int tests, MPI_Request *request) {
    double start = MPI_Wtime();
    for (int slice = 0; slice <= tests; slice++) {
        double until = start + seconds * (slice + 1) / (tests + 1);
        while (MPI_Wtime() < until) {
        }
        int flag;
        if (slice < tests && *request != MPI_REQUEST_NULL)
            MPI_Test(request, &flag, MPI_STATUS_IGNORE);
    }
}

static int always_papcoll_wait; /* --wait papcoll */
static char ran[8][64];         /* per contender: what papcoll ran at its last call */

static double run_once(papcoll_comm *pc, int index, const char *contender, float *in,
                       float *out, int count, double compute_seconds, int tests) {
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Request request;
    double start = MPI_Wtime();
    int native = strcmp(contender, "native") == 0;
    if (native) {
        MPI_Iallreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &request);
    } else {
        papcoll_set_algorithm(pc, contender);
        if (papcoll_iallreduce(pc, in, out, count, MPI_FLOAT, MPI_SUM, &request) !=
            MPI_SUCCESS)
            MPI_Abort(MPI_COMM_WORLD, 3);
        papcoll_choice choice;
        papcoll_last_choice(pc, &choice);
        snprintf(ran[index], sizeof ran[index], "%s",
                 strcmp(contender, "auto") == 0 ? choice.algorithm : contender);
    }
    if (compute_seconds > 0) compute(compute_seconds, tests, &request);
    if (native || (papcoll_mpi_advances_requests() && !always_papcoll_wait))
        MPI_Wait(&request, MPI_STATUS_IGNORE);
    else papcoll_wait(&request, MPI_STATUS_IGNORE);
    double mine = MPI_Wtime() - start, slowest;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

static int parse_list(char *text, char **items, int most) {
    int count = 0;
    for (char *item = strtok(text, ","); item != NULL && count < most; item = strtok(NULL, ","))
        items[count++] = item;
    return count;
}

int main(int argc, char **argv) {
    start_mpi_for_progress_setting(&argc, &argv);
    const char *progress = getenv("PAPCOLL_PROGRESS");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    char sizes_text[256] = "65536,1048576,16777216", contenders_text[256] = "native,auto,ring";
    int iterations = 20, warmup = 5, tests = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--sizes") == 0) snprintf(sizes_text, sizeof sizes_text, "%s", argv[i + 1]);
        else if (strcmp(argv[i], "--contenders") == 0)
            snprintf(contenders_text, sizeof contenders_text, "%s", argv[i + 1]);
        else if (strcmp(argv[i], "--iterations") == 0) iterations = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--warmup") == 0) warmup = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--tests") == 0) tests = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--wait") == 0 && (strcmp(argv[i + 1], "mpi") == 0 ||
                                                    strcmp(argv[i + 1], "papcoll") == 0))
            always_papcoll_wait = strcmp(argv[i + 1], "papcoll") == 0;
        else {
            if (rank == 0) fprintf(stderr, "papcoll-overlap: unknown option %s\n", argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (iterations < 1 || warmup < 0 || tests < 0) {
        if (rank == 0) fprintf(stderr, "papcoll-overlap: iterations >= 1, warmup and tests >= 0\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char *size_items[MOST_SIZES], *contenders[MOST_CONTENDERS];
    int size_count = parse_list(sizes_text, size_items, MOST_SIZES);
    int contender_count = parse_list(contenders_text, contenders, MOST_CONTENDERS);
    papcoll_comm *pc;
    if (papcoll_comm_create(MPI_COMM_WORLD, NULL, &pc) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 2);
    for (int c = 0; c < contender_count; c++)
        if (strcmp(contenders[c], "native") != 0 &&
            papcoll_set_algorithm(pc, contenders[c]) != MPI_SUCCESS) {
            if (rank == 0) fprintf(stderr, "papcoll-overlap: %s\n", papcoll_error_string(MPI_ERR_ARG));
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    if (rank == 0)
        printf("# P = %d, progress %s, %d MPI_Test calls during compute, medians of %d\n"
               "%10s %-12s %10s %10s %10s %8s  %s\n", ranks, progress ? progress : "calls",
               tests, iterations, "bytes", "contender", "pure_us", "compute_us", "overall_us",
               "overlap%", "ran");
    double *pure = malloc((size_t)(iterations * MOST_CONTENDERS) * sizeof *pure);
    double *overall = malloc((size_t)(iterations * MOST_CONTENDERS) * sizeof *overall);
    for (int s = 0; s < size_count; s++) {
        long bytes = atol(size_items[s]);
        int count = (int)(bytes / (long)sizeof(float));
        float *in = malloc((size_t)count * sizeof *in + 1), *out = malloc((size_t)count * sizeof *out + 1);
        for (int i = 0; i < count; i++) in[i] = (float)(rank + i % 7);
        double pure_median[MOST_CONTENDERS];
        /* pass 1: the communication alone, interleaved */
        for (int it = -warmup; it < iterations; it++)
            for (int c = 0; c < contender_count; c++) {
                double t = run_once(pc, c, contenders[c], in, out, count, 0, 0);
                if (it >= 0) pure[c * iterations + it] = t;
            }
        for (int c = 0; c < contender_count; c++)
            pure_median[c] = median(&pure[c * iterations], iterations, NULL);
        /* pass 2: with compute as long as the communication alone */
        for (int it = -warmup; it < iterations; it++)
            for (int c = 0; c < contender_count; c++) {
                double t = run_once(pc, c, contenders[c], in, out, count, pure_median[c],
                                    tests);
                if (it >= 0) overall[c * iterations + it] = t;
            }
        for (int c = 0; c < contender_count && rank == 0; c++) {
            double total = median(&overall[c * iterations], iterations, NULL);
            double hidden = 100.0 - (total - pure_median[c]) / pure_median[c] * 100.0;
            if (hidden < 0) hidden = 0;
            printf("%10ld %-12s %10.1f %10.1f %10.1f %8.1f  %s\n", bytes, contenders[c],
                   pure_median[c] * 1e6, pure_median[c] * 1e6, total * 1e6, hidden, ran[c]);
            printf("json {\"ranks\": %d, \"progress\": \"%s\", \"tests\": %d, \"bytes\": %ld, "
                   "\"contender\": \"%s\", \"pure_us\": %.2f, \"compute_us\": %.2f, "
                   "\"overall_us\": %.2f, \"overlap_percent\": %.2f, \"ran\": \"%s\"}\n", ranks,
                   progress ? progress : "calls", tests, bytes, contenders[c],
                   pure_median[c] * 1e6, pure_median[c] * 1e6, total * 1e6, hidden, ran[c]);
        }
        free(in);
        free(out);
    }
    free(pure);
    free(overall);
    papcoll_comm_free(&pc);
    MPI_Finalize();
    return 0;
}
