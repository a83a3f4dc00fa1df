/* reproducible_unmodified.c - an MPI program that knows nothing of papcoll, for the drop-in
 * in reproducible mode (issue 34; tests/python/test_reproducible.py runs it under
 * libpapcoll_pmpi.so with PAPCOLL_REPRODUCIBLE=1): MPI_Iallreduce, then MPI_Allreduce,
 * float and double sums of data with wildly different magnitudes and signed zeros, every
 * rank arriving after a random delay, compared bit for bit with the canonical order's
 * value ((x0 + x1) + x2) ...
 * (tests/mpi/common/canonical_value.h). Prints "reproducible_unmodified: E of N equal" on
 * rank 0 (E: calls whose result equals it on every rank); MPI itself promises no order, so
 * without the preload E is whatever the MPI's algorithms give. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../mpi/common/canonical_value.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const int64_t counts[] = {1, 3, 1009, 70000};
    int equal = 0, calls = 0;
    uint64_t seed = 7;
    /* MPI_Iallreduce first, before any blocking call (on world, whose papcoll communicator
     * the preload makes at MPI_Init in reproducible mode), then MPI_Allreduce */
    for (int nonblocking = 1; nonblocking >= 0; nonblocking--)
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
        for (int is_float = 0; is_float < 2; is_float++, seed++) {
            if (nonblocking && c < 2) continue; /* two sizes of each type posted */
            int64_t count = counts[c];
            size_t bytes = (size_t)count * (is_float ? sizeof(float) : sizeof(double));
            void *input = malloc(bytes), *output = malloc(bytes), *expected = malloc(bytes);
            wild_fill(input, is_float, rank, count, seed, 1);
            canonical_value(expected, is_float, MPI_SUM, ranks, count, seed, 1);
            srand((unsigned)(seed * 31 + (uint64_t)rank));
            MPI_Barrier(MPI_COMM_WORLD);
            struct timespec pause = {0, (long)(rand() % 2000) * 1000};
            nanosleep(&pause, NULL);
            MPI_Datatype datatype = is_float ? MPI_FLOAT : MPI_DOUBLE;
            if (nonblocking) {
                MPI_Request request;
                MPI_Iallreduce(input, output, (int)count, datatype, MPI_SUM, MPI_COMM_WORLD,
                               &request);
                MPI_Wait(&request, MPI_STATUS_IGNORE);
            } else {
                MPI_Allreduce(input, output, (int)count, datatype, MPI_SUM, MPI_COMM_WORLD);
            }
            int mine = memcmp(output, expected, bytes) == 0, all = 0;
            MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
            equal += all;
            calls++;
            free(input);
            free(output);
            free(expected);
        }
    if (rank == 0) printf("reproducible_unmodified: %d of %d equal\n", equal, calls);
    MPI_Finalize();
    return 0;
}
