/* rules_unmodified.c - an MPI program that knows nothing of papcoll, for a rules file under
 * the drop-in (PAPCOLL_RULES; tests/python/test_rules.py). Four shapes, each from call
 * sites of its own (the report counts per site what ran there): MPI_Allreduce 3 times, then
 * MPI_Iallreduce and a persistent request started twice. Every result is compared with its
 * closed form (the sum or maximum over ranks of small whole numbers, exact in any order).
 * Prints "rules_unmodified: N of M equal". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

enum { SHAPES = 4, REPEATS = 3 };

static const int counts[SHAPES] = {100, 1000, 20000, 1000};

static double element(int rank, int i) { return (double)((rank * 7 + i) % 13); }

/* Compares result (shape s) with its closed form; 1 where equal. */
static int equal(int s, const void *result, int ranks) {
    for (int i = 0; i < counts[s]; i++) {
        double expected = 0;
        for (int r = 0; r < ranks; r++) {
            double value = element(r, i);
            if (s == 3) expected = r == 0 || value > expected ? value : expected;
            else expected += value;
        }
        double got = s == 0 ? ((const int *)result)[i]
                   : s == 3 ? ((const float *)result)[i] : ((const double *)result)[i];
        if (got != expected) return 0;
    }
    return 1;
}

static void fill(int s, void *buffer, int rank) {
    for (int i = 0; i < counts[s]; i++) {
        if (s == 0) ((int *)buffer)[i] = (int)element(rank, i);
        else if (s == 3) ((float *)buffer)[i] = (float)element(rank, i);
        else ((double *)buffer)[i] = element(rank, i);
    }
}

/* Each shape's calls in functions of their own: a compiler merges the calls of a switch's
 * cases into one call instruction, which would make them one call site. Each checks what
 * MPI returned, which keeps the call from becoming a jump (whose return address, the call
 * site, would be the caller's, the same for every shape). */
#define SHAPE_CALLS(shape, datatype, op)                                                     \
    __attribute__((noinline)) static void blocking_##shape(const void *send, void *result) { \
        if (MPI_Allreduce(send, result, counts[shape], datatype, op, MPI_COMM_WORLD))        \
            abort();                                                                         \
    }                                                                                        \
    __attribute__((noinline)) static void posted_##shape(const void *send, void *result,     \
                                                         MPI_Request *request) {             \
        if (MPI_Iallreduce(send, result, counts[shape], datatype, op, MPI_COMM_WORLD,        \
                           request))                                                         \
            abort();                                                                         \
    }                                                                                        \
    __attribute__((noinline)) static void persistent_##shape(const void *send, void *result, \
                                                             MPI_Request *request) {         \
        if (MPI_Allreduce_init(send, result, counts[shape], datatype, op, MPI_COMM_WORLD,    \
                               MPI_INFO_NULL, request))                                      \
            abort();                                                                         \
    }
SHAPE_CALLS(0, MPI_INT, MPI_SUM)
SHAPE_CALLS(1, MPI_DOUBLE, MPI_SUM)
SHAPE_CALLS(2, MPI_DOUBLE, MPI_SUM)
SHAPE_CALLS(3, MPI_FLOAT, MPI_MAX)

typedef struct shape_calls {
    void (*blocking)(const void *, void *);
    void (*posted)(const void *, void *, MPI_Request *);
    void (*persistent)(const void *, void *, MPI_Request *);
} shape_calls;

static const shape_calls calls[SHAPES] = {{blocking_0, posted_0, persistent_0},
                                          {blocking_1, posted_1, persistent_1},
                                          {blocking_2, posted_2, persistent_2},
                                          {blocking_3, posted_3, persistent_3}};

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, ranks = 1, good = 0, tried = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    for (int s = 0; s < SHAPES; s++) {
        size_t bytes = (size_t)counts[s] * sizeof(double);
        char *send = malloc(bytes), *result = malloc(bytes);
        fill(s, send, rank);
        for (int k = 0; k < REPEATS; k++) {
            memset(result, 0, bytes);
            calls[s].blocking(send, result);
            good += equal(s, result, ranks);
            tried++;
        }
        MPI_Request request;
        memset(result, 0, bytes);
        calls[s].posted(send, result, &request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        good += equal(s, result, ranks);
        tried++;
        calls[s].persistent(send, result, &request);
        for (int start = 0; start < 2; start++) {
            memset(result, 0, bytes);
            MPI_Start(&request);
            MPI_Wait(&request, MPI_STATUS_IGNORE);
            good += equal(s, result, ranks);
            tried++;
        }
        MPI_Request_free(&request);
        free(send);
        free(result);
    }
    int all[2] = {good, tried}, sums[2];
    PMPI_Allreduce(all, sums, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("rules_unmodified: %d of %d equal\n", sums[0], sums[1]);
    MPI_Finalize();
    return 0;
}
