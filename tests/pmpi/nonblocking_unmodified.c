/* nonblocking_unmodified.c - an MPI program that knows nothing of papcoll, for the drop-in's
 * non-blocking and persistent all-reduce (tests/python/test_pmpi.py runs it with and
 * without libpapcoll_pmpi.so). Every result is checked against a closed form (rank r gives
 * (r + 1)(i % 7 + 1) at element i) and, through MPI_Gather, for the same bytes on every rank:
 *   - one blocking MPI_Allreduce first on a duplicate of MPI_COMM_WORLD (under the preload
 *     it makes the papcoll communicator that non-blocking posts need);
 *   - three MPI_Iallreduce outstanding at once beside the program's own MPI_Isend/MPI_Irecv,
 *     completed in one MPI_Waitall; one in place, completed by an MPI_Test loop;
 *   - two persistent all-reduces (MPI_Allreduce_init) and a persistent send/receive pair,
 *     started together by MPI_Startall and completed by MPI_Waitany, six rounds, the last
 *     rank 5 ms late at each; MPI_Test on the inactive requests; MPI_Request_free;
 *   - MPI_Comm_free with an MPI_Iallreduce pending, then its MPI_Wait; and a persistent
 *     all-reduce started three times after its communicator was freed (it keeps it alive,
 *     MPI-4.1 7.4.3).
 * With "multiple": MPI_Init_thread(MPI_THREAD_MULTIPLE) (Open MPI needs papcoll's progress
 * thread, PAPCOLL_PROGRESS=thread, to run these through papcoll).
 * Prints "nonblocking_unmodified: N checks passed" on rank 0 and exits 0, or names the
 * first failure. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../mpi/common/same_bytes.h"

static int rank, size, checks;

static void fail(const char *what, long index, long got, long want) {
    fprintf(stderr, "nonblocking_unmodified (rank %d): %s: element %ld is %ld, expected %ld\n",
            rank, what, index, got, want);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

static void fill(int64_t *data, int count) {
    for (int i = 0; i < count; i++) data[i] = (int64_t)(rank + 1) * (i % 7 + 1);
}

/* The closed form, and the same bytes on every rank. */
static void check(const int64_t *data, int count, const char *what) {
    for (int i = 0; i < count; i++) {
        int64_t want = (int64_t)size * (size + 1) / 2 * (i % 7 + 1);
        if (data[i] != want) fail(what, i, (long)data[i], (long)want);
    }
    require_same_bytes(data, count * (int)sizeof *data, MPI_COMM_WORLD,
                       "nonblocking_unmodified", what);
    checks++;
}

static void nonblocking(MPI_Comm comm) {
    enum { POSTS = 3 };
    int counts[POSTS] = {20000, 3, 100000};
    int64_t *in[POSTS], *out[POSTS];
    MPI_Request requests[POSTS + 2];
    for (int k = 0; k < POSTS; k++) {
        in[k] = malloc((size_t)counts[k] * sizeof(int64_t));
        out[k] = malloc((size_t)counts[k] * sizeof(int64_t));
        fill(in[k], counts[k]);
        MPI_Iallreduce(in[k], out[k], counts[k], MPI_INT64_T, MPI_SUM, comm, &requests[k]);
    }
    int token = rank, received = -1;
    MPI_Irecv(&received, 1, MPI_INT, (rank + size - 1) % size, 7, comm, &requests[POSTS]);
    MPI_Isend(&token, 1, MPI_INT, (rank + 1) % size, 7, comm, &requests[POSTS + 1]);
    MPI_Waitall(POSTS + 2, requests, MPI_STATUSES_IGNORE);
    if (received != (rank + size - 1) % size) fail("the program's own message", 0, received, 0);
    for (int k = 0; k < POSTS; k++) {
        check(out[k], counts[k], "MPI_Iallreduce, three outstanding, MPI_Waitall");
        free(in[k]);
    }
    fill(out[2], counts[2]);
    MPI_Request request;
    MPI_Iallreduce(MPI_IN_PLACE, out[2], counts[2], MPI_INT64_T, MPI_SUM, comm, &request);
    int flag = 0;
    while (!flag) MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
    check(out[2], counts[2], "MPI_Iallreduce in place, MPI_Test");
    for (int k = 0; k < POSTS; k++) free(out[k]);
}

static void persistent(MPI_Comm comm) {
    enum { ROUNDS = 6 };
    int counts[2] = {50000, 9};
    int64_t *in[2], *out[2];
    MPI_Request requests[4];
    for (int k = 0; k < 2; k++) {
        in[k] = malloc((size_t)counts[k] * sizeof(int64_t));
        out[k] = malloc((size_t)counts[k] * sizeof(int64_t));
        fill(in[k], counts[k]);
        MPI_Allreduce_init(in[k], out[k], counts[k], MPI_INT64_T, MPI_SUM, comm, MPI_INFO_NULL,
                           &requests[k]);
    }
    int token = rank, received = -1;
    MPI_Recv_init(&received, 1, MPI_INT, (rank + size - 1) % size, 8, comm, &requests[2]);
    MPI_Send_init(&token, 1, MPI_INT, (rank + 1) % size, 8, comm, &requests[3]);
    for (int round = 0; round < ROUNDS; round++) {
        memset(out[0], 0, (size_t)counts[0] * sizeof(int64_t));
        memset(out[1], 0, (size_t)counts[1] * sizeof(int64_t));
        received = -1;
        if (rank == size - 1) {
            struct timespec late = {0, 5000000};
            nanosleep(&late, NULL);
        }
        MPI_Startall(4, requests);
        for (int done = 0; done < 4; done++) {
            int index = MPI_UNDEFINED;
            MPI_Waitany(4, requests, &index, MPI_STATUS_IGNORE);
            if (index == MPI_UNDEFINED) fail("MPI_Waitany found nothing active", done, 0, 0);
        }
        if (received != (rank + size - 1) % size) fail("persistent receive", round, received, 0);
        check(out[0], counts[0], "MPI_Allreduce_init, MPI_Startall, MPI_Waitany");
        check(out[1], counts[1], "MPI_Allreduce_init, small");
    }
    for (int k = 0; k < 4; k++) { /* inactive now: MPI_Test says done at once */
        int flag = 0;
        MPI_Test(&requests[k], &flag, MPI_STATUS_IGNORE);
        if (!flag) fail("MPI_Test on an inactive persistent request", k, 0, 1);
        MPI_Request_free(&requests[k]);
        if (requests[k] != MPI_REQUEST_NULL) fail("MPI_Request_free", k, 0, 0);
    }
    checks++;
    for (int k = 0; k < 2; k++) {
        free(in[k]);
        free(out[k]);
    }
}

/* MPICH only: Open MPI 5.0.11's own non-blocking and persistent all-reduce crash when
 * their communicator is freed while they are pending or before they start (libnbc sends
 * into the freed communicator), so the sequence, legal MPI, cannot run there with or
 * without papcoll. */
static void freed_communicators(void) {
#ifdef MPICH_NUMVERSION
    enum { COUNT = 30000 };
    int64_t *in = malloc(COUNT * sizeof *in), *out = malloc(COUNT * sizeof *out);
    fill(in, COUNT);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Allreduce(in, out, COUNT, MPI_INT64_T, MPI_SUM, comm);
    MPI_Request request;
    MPI_Iallreduce(in, out, COUNT, MPI_INT64_T, MPI_SUM, comm, &request);
    MPI_Comm_free(&comm);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    check(out, COUNT, "MPI_Iallreduce pending while its communicator is freed");
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Allreduce_init(in, out, COUNT, MPI_INT64_T, MPI_SUM, comm, MPI_INFO_NULL, &request);
    MPI_Comm_free(&comm);
    for (int start = 0; start < 3; start++) {
        memset(out, 0, COUNT * sizeof *out);
        MPI_Start(&request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        check(out, COUNT, "MPI_Allreduce_init started after its communicator was freed");
    }
    MPI_Request_free(&request);
    free(in);
    free(out);
#endif
}

int main(int argc, char **argv) {
    int provided;
    if (argc > 1 && strcmp(argv[1], "multiple") == 0)
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    int64_t first[64], result[64];
    fill(first, 64);
    MPI_Allreduce(first, result, 64, MPI_INT64_T, MPI_SUM, comm);
    check(result, 64, "a blocking MPI_Allreduce first");
    nonblocking(comm);
    persistent(comm);
    MPI_Comm_free(&comm);
    freed_communicators();
    if (rank == 0) printf("nonblocking_unmodified: %d checks passed\n", checks);
    MPI_Finalize();
    return 0;
}
