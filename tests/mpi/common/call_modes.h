/* call_modes.h - one all-reduce made the three ways papcoll offers (blocking, non-blocking,
 * persistent), for the differential test (differential.c --call); header-only, as the
 * other shared parts of tests/mpi/common. */
#ifndef PAPCOLL_TESTS_CALL_MODES_H
#define PAPCOLL_TESTS_CALL_MODES_H

#include <stdio.h>
#include <string.h>

#include "papcoll.h"

/* Completes requests[0] (papcoll's) and the rest (the program's) together. */
static int complete_all(MPI_Request *requests, int count) {
    int inside_mpi = papcoll_mpi_advances_requests(); /* MPI's hook or the thread */
    if (!inside_mpi) {
        int code = papcoll_wait(&requests[0], MPI_STATUS_IGNORE);
        if (code != MPI_SUCCESS) return code;
    }
    return MPI_Waitall(count, requests, MPI_STATUSES_IGNORE);
}

/* One all-reduce, the way call_mode ("blocking", "nonblocking", "persistent") asks. */
static int run_call(const char *call_mode, papcoll_comm *pc, const void *sendbuf,
                    void *recvbuf, int64_t count, MPI_Datatype datatype, MPI_Op op, int rank,
                    int ranks) {
    if (strcmp(call_mode, "nonblocking") == 0) {
        MPI_Request requests[3];
        int code = papcoll_iallreduce_c(pc, sendbuf, recvbuf, count, datatype, op, &requests[0]);
        if (code != MPI_SUCCESS) return code;
        int token = rank, received = -1; /* the program's own traffic, on its communicator */
        MPI_Irecv(&received, 1, MPI_INT, (rank + ranks - 1) % ranks, 77, MPI_COMM_WORLD,
                  &requests[1]);
        MPI_Isend(&token, 1, MPI_INT, (rank + 1) % ranks, 77, MPI_COMM_WORLD, &requests[2]);
        code = complete_all(requests, 3);
        if (code == MPI_SUCCESS && received != (rank + ranks - 1) % ranks) {
            fprintf(stderr, "FAIL rank %d: the program's own message was lost\n", rank);
            return MPI_ERR_OTHER;
        }
        return code;
    }
    if (strcmp(call_mode, "persistent") == 0) {
        papcoll_persistent *persistent = NULL;
        int code = papcoll_allreduce_init(pc, sendbuf, recvbuf, count, datatype, op,
                                          &persistent);
        /* in place, a second start would reduce the first's result again */
        int starts = sendbuf == MPI_IN_PLACE ? 1 : 2;
        for (int s = 0; s < starts && code == MPI_SUCCESS; s++) {
            MPI_Request request;
            code = papcoll_start(persistent, &request);
            if (code == MPI_SUCCESS) code = complete_all(&request, 1);
        }
        int freed = papcoll_persistent_free(&persistent);
        return code != MPI_SUCCESS ? code : freed;
    }
    return papcoll_allreduce_c(pc, sendbuf, recvbuf, count, datatype, op);
}

#endif /* PAPCOLL_TESTS_CALL_MODES_H */
