/* setup_cost.c - papcoll-setup-cost: what a plain MPI program pays in MPI_Init and in
 * MPI_Comm_dup / MPI_Comm_free, run with and without libpapcoll_pmpi.so preloaded (the
 * drop-in makes its own communicator for MPI_COMM_WORLD in MPI_Init and for each
 * communicator the program makes in its constructor, so that the program's first
 * MPI_Iallreduce finds one; docs/pmpi.md, docs/benchmarks.md).
 *
 *   papcoll-setup-cost [DUPLICATES]      (default 200)
 *
 * MPI_Init: the time from before the call to after it on each rank, the slowest rank's.
 * Then DUPLICATES rounds of a barrier, MPI_Comm_dup of MPI_COMM_WORLD and MPI_Comm_free,
 * each call timed on every rank; per round the slowest rank's time; printed: the median
 * and the smallest over rounds (a shared machine makes samples late, never early). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "common/statistics.h"
#include "common/usage.h"

static double seconds_now(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

static double slowest(double mine) {
    double all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return all;
}

int main(int argc, char **argv) {
    double before = seconds_now();
    MPI_Init(&argc, &argv);
    double init_seconds = seconds_now() - before;
    usage_init("papcoll-setup-cost", "usage: papcoll-setup-cost [DUPLICATES]\n"
               "  DUPLICATES: rounds of MPI_Comm_dup and MPI_Comm_free timed (default 200)\n");
    int rounds = 200;
    if (argc > 2) usage_error("expected at most one argument, got '%s'", argv[2]);
    if (argc > 1) {
        char *end = NULL;
        long asked = strtol(argv[1], &end, 10);
        if (end == argv[1] || *end != '\0' || asked < 1 || asked > 100000)
            usage_error("DUPLICATES='%s' is not a whole number from 1 to 100000", argv[1]);
        rounds = (int)asked;
    }
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    init_seconds = slowest(init_seconds);
    double *duplicate = malloc((size_t)rounds * sizeof *duplicate);
    double *release = malloc((size_t)rounds * sizeof *release);
    if (duplicate == NULL || release == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
    for (int round = 0; round < rounds; round++) {
        MPI_Comm comm;
        MPI_Barrier(MPI_COMM_WORLD);
        double start = seconds_now();
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        double made = seconds_now();
        MPI_Comm_free(&comm);
        double freed = seconds_now();
        duplicate[round] = slowest(made - start);
        release[round] = slowest(freed - made);
    }
    double fastest_duplicate, fastest_release;
    double median_duplicate = median(duplicate, rounds, &fastest_duplicate);
    double median_release = median(release, rounds, &fastest_release);
    if (rank == 0)
        printf("setup_cost: ranks %d, MPI_Init %.1f ms, MPI_Comm_dup median %.1f us "
               "(fastest %.1f), MPI_Comm_free median %.1f us (fastest %.1f), %d rounds\n",
               ranks, init_seconds * 1e3, median_duplicate * 1e6, fastest_duplicate * 1e6,
               median_release * 1e6, fastest_release * 1e6, rounds);
    free(duplicate);
    free(release);
    MPI_Finalize();
    return 0;
}
