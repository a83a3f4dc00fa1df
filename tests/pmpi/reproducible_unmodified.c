/* reproducible_unmodified.c - an MPI program that knows nothing of papcoll, for the drop-in
 * in reproducible mode (tests/python/test_reproducible.py runs it under
 * libpapcoll_pmpi.so with PAPCOLL_REPRODUCIBLE=1): MPI_Iallreduce, then MPI_Allreduce,
 * float and double sums of data with wildly different magnitudes and signed zeros, every
 * rank arriving after a random delay, compared bit for bit with the canonical order's
 * value ((x0 + x1) + x2) ...
 * (tests/mpi/common/canonical_value.h), on MPI_COMM_WORLD and on communicators the program
 * makes (a duplicate, a split in reversed rank order) before any blocking call on them.
 * The checks go through PMPI_ so they stay outside what is counted. Prints "reproducible_unmodified: E of N equal" on
 * rank 0 (E: calls whose result equals it on every rank); MPI itself promises no order, so
 * without the preload E is whatever the MPI's algorithms give. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../mpi/common/canonical_value.h"

/* Each call's bits against the canonical order's value on comm, whose rank order it folds
 * in; *equal counts the calls equal on every rank. */
static void sums(MPI_Comm comm, int nonblocking, uint64_t *seed, int *equal, int *calls) {
    int rank, ranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    const int64_t counts[] = {1, 3, 1009, 70000};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
        for (int is_float = 0; is_float < 2; is_float++, (*seed)++) {
            if (nonblocking && c < 2) continue; /* two sizes of each type posted */
            int64_t count = counts[c];
            size_t bytes = (size_t)count * (is_float ? sizeof(float) : sizeof(double));
            void *input = malloc(bytes), *output = malloc(bytes), *expected = malloc(bytes);
            wild_fill(input, is_float, rank, count, *seed, 1);
            canonical_value(expected, is_float, MPI_SUM, ranks, count, *seed, 1);
            srand((unsigned)(*seed * 31 + (uint64_t)rank));
            PMPI_Barrier(comm);
            struct timespec pause = {0, (long)(rand() % 2000) * 1000};
            nanosleep(&pause, NULL);
            MPI_Datatype datatype = is_float ? MPI_FLOAT : MPI_DOUBLE;
            if (nonblocking) {
                MPI_Request request;
                MPI_Iallreduce(input, output, (int)count, datatype, MPI_SUM, comm, &request);
                MPI_Wait(&request, MPI_STATUS_IGNORE);
            } else {
                MPI_Allreduce(input, output, (int)count, datatype, MPI_SUM, comm);
            }
            int mine = memcmp(output, expected, bytes) == 0, all = 0;
            PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
            *equal += all;
            (*calls)++;
            free(input);
            free(output);
            free(expected);
        }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    int equal = 0, calls = 0;
    uint64_t seed = 7;
    /* MPI_Iallreduce first, before any blocking call (on world, whose papcoll communicator
     * the preload makes at MPI_Init in reproducible mode), then MPI_Allreduce */
    sums(MPI_COMM_WORLD, 1, &seed, &equal, &calls);
    sums(MPI_COMM_WORLD, 0, &seed, &equal, &calls);
    /* communicators the program makes: posts before any blocking call on them, on a
     * duplicate and on a split whose rank order is world's reversed (the fold follows the
     * new order); the preload makes their papcoll communicators as they are made */
    MPI_Comm duplicate, reversed;
    MPI_Comm_dup(MPI_COMM_WORLD, &duplicate);
    MPI_Comm_split(MPI_COMM_WORLD, 0, ranks - rank, &reversed);
    sums(duplicate, 1, &seed, &equal, &calls);
    sums(reversed, 1, &seed, &equal, &calls);
    MPI_Comm_free(&duplicate);
    MPI_Comm_free(&reversed);
    if (argc > 1 && strcmp(argv[1], "--idup") == 0) {
        /* a communicator the preload cannot prepare (docs/reproducible.md): its post goes
         * to the MPI, and the preload says so on stderr */
        MPI_Comm later;
        MPI_Request made;
        MPI_Comm_idup(MPI_COMM_WORLD, &later, &made);
        MPI_Wait(&made, MPI_STATUS_IGNORE);
        sums(later, 1, &seed, &equal, &calls);
        MPI_Comm_free(&later);
    }
    if (rank == 0) printf("reproducible_unmodified: %d of %d equal\n", equal, calls);
    MPI_Finalize();
    return 0;
}
