/* large_count.c - an MPI program that knows nothing of papcoll, for counts above 2^31 - 1 in
 * MPI 4's large-count non-blocking and persistent all-reduces (MPI_Iallreduce_c,
 * MPI_Allreduce_init_c), which the drop-in takes as it takes MPI_Iallreduce
 * (tests/python/test_hardening_mpi.py runs it under libpapcoll_pmpi.so).
 *
 * argv[1]: the count (default 2^31 + 7); argv[2] "multiple" asks for MPI_THREAD_MULTIPLE
 * (for PAPCOLL_PROGRESS=thread). The vector is of MPI_UNSIGNED_CHAR, summed in place,
 * so that a count past 2^31 costs 2 GiB a rank and no second buffer: at round k rank r holds
 * (i + r + k) mod 251 at element i, so element i of the sum is the sum over r of that,
 * wrapped mod 256 as unsigned char arithmetic wraps; it depends on i mod 251 only, so the
 * check compares with a table of 251 sums, no reference vector. A post, then two starts of
 * one persistent request, each checked: "large_count: rank R CALL count N code C wrong W".
 *
 * Open MPI 5.0 has no large-count calls: there the program says so and exits 0 (the test
 * skips). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "start_world.h"

static int rank, size;

/* Open MPI 5.0 says MPI 3.1 and has no large-count calls */
#if MPI_VERSION >= 4 && !defined(OPEN_MPI)
#define LARGE_COUNT_CALLS 1
#else
#define LARGE_COUNT_CALLS 0
#endif

#if LARGE_COUNT_CALLS

/* what rank `who` holds at round k, by i mod 251 */
static unsigned char held(unsigned residue, int who, int round) {
    return (unsigned char)((residue + (unsigned)who + (unsigned)round) % 251u);
}

static void fill(unsigned char *data, MPI_Count count, int round) {
    unsigned char table[251];
    for (unsigned v = 0; v < 251; v++) table[v] = held(v, rank, round);
    unsigned residue = 0;
    for (MPI_Count i = 0; i < count; i++) {
        data[i] = table[residue];
        residue = residue == 250 ? 0 : residue + 1;
    }
}

/* the wrong elements of a sum of every rank's fill(round) */
static MPI_Count wrong(const unsigned char *data, MPI_Count count, int round) {
    unsigned char sums[251];
    for (unsigned v = 0; v < 251; v++) {
        unsigned sum = 0;
        for (int r = 0; r < size; r++) sum += held(v, r, round);
        sums[v] = (unsigned char)sum;
    }
    MPI_Count bad = 0;
    unsigned residue = 0;
    for (MPI_Count i = 0; i < count; i++) {
        bad += data[i] != sums[residue];
        residue = residue == 250 ? 0 : residue + 1;
    }
    return bad;
}

static void say(const char *call, MPI_Count count, int code, MPI_Count bad) {
    printf("large_count: rank %d %s count %lld code %d wrong %lld\n", rank, call,
           (long long)count, code, (long long)bad);
    fflush(stdout);
}

#endif /* LARGE_COUNT_CALLS */

int main(int argc, char **argv) {
    start_world(&argc, &argv, argc > 2 ? argv[2] : NULL, &rank, &size);
#if LARGE_COUNT_CALLS
    MPI_Count count = argc > 1 ? strtoll(argv[1], NULL, 10) : ((MPI_Count)1 << 31) + 7;
    unsigned char *data = malloc((size_t)count);
    if (data == NULL) {
        printf("large_count: rank %d cannot allocate %lld bytes\n", rank, (long long)count);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Request request;
    fill(data, count, 0);
    int code = MPI_Iallreduce_c(MPI_IN_PLACE, data, count, MPI_UNSIGNED_CHAR, MPI_SUM,
                                MPI_COMM_WORLD, &request);
    if (code == MPI_SUCCESS) code = MPI_Wait(&request, MPI_STATUS_IGNORE);
    say("MPI_Iallreduce_c", count, code, code == MPI_SUCCESS ? wrong(data, count, 0) : -1);
    code = MPI_Allreduce_init_c(MPI_IN_PLACE, data, count, MPI_UNSIGNED_CHAR, MPI_SUM,
                                MPI_COMM_WORLD, MPI_INFO_NULL, &request);
    for (int round = 1; round <= 2 && code == MPI_SUCCESS; round++) {
        fill(data, count, round);
        code = MPI_Start(&request);
        if (code == MPI_SUCCESS) code = MPI_Wait(&request, MPI_STATUS_IGNORE);
        say(round == 1 ? "MPI_Allreduce_init_c/start1" : "MPI_Allreduce_init_c/start2", count,
            code, code == MPI_SUCCESS ? wrong(data, count, round) : -1);
    }
    if (code == MPI_SUCCESS) MPI_Request_free(&request);
    free(data);
#else
    printf("large_count: rank %d this MPI has no large-count calls\n", rank);
#endif
    MPI_Finalize();
    return 0;
}
