/* request_errors.c - an MPI program that knows nothing of papcoll, for what the drop-in's
 * non-blocking and persistent all-reduces do where the program errs or an operation fails
 * (tests/python/test_hardening_mpi.py runs it under libpapcoll_pmpi.so). argv[1] names the
 * case, argv[2] "multiple" asks for MPI_THREAD_MULTIPLE (for PAPCOLL_PROGRESS=thread);
 * MPI_COMM_WORLD returns errors in every case. Each prints one line per rank,
 * "request_errors: rank R CASE class C refused F wrong W text T": the code's class, whether
 * it is MPI_ERR_REQUEST, the wrong elements of the all-reduces after it, its
 * MPI_Error_string:
 *   cancel-persistent   MPI_Cancel of a started MPI_Allreduce_init request: the code's
 *                       class (MPI_ERR_REQUEST where refused, 0 where accepted), then the
 *                       start's and 5 more starts' results checked
 *   cancel-post         MPI_Cancel of an MPI_Iallreduce request, then its result
 *   start-active        MPI_Start of a request whose start is not completed: the class
 *   failed-post         rank 0 passes MPI_Iallreduce 7 more elements than the others
 *                       (erroneous): the drop-in ends the job with papcoll's message
 *                       before MPI_Wait returns; a rank whose wait returns says its code
 *   failed-persistent   the same for one start of an MPI_Allreduce_init request
 *   refused-init        rank 0 passes MPI_Allreduce_init 7 more elements than the others
 *                       (run with PAPCOLL_CHECK=1, so papcoll refuses the init), then
 *                       MPI_Start of the request it left: the start's class
 *   status              the status an MPI_Wait gives a completed MPI_Iallreduce and a
 *                       completed start: "status source S tag T count C cancelled X" for
 *                       each, to compare with the MPI's own (without the preload)
 *   neighbour-failed    a started MPI_Allreduce_init request completed in one
 *                       MPI_Waitall (MPI_STATUSES_IGNORE) beside a receive that fails
 *                       (truncated): then STARTS more starts, the first one's class
 *                       (MPI_ERR_OTHER where the Waitall did not return
 *                       MPI_ERR_IN_STATUS, the premise)
 *   many                200 MPI_Iallreduce outstanding at once, completed by one
 *                       MPI_Waitall in reverse order of posting, then 100 by MPI_Testsome,
 *                       then 20 persistent all-reduces in MPI_Startall / MPI_Waitall, 3
 *                       rounds: "wrong" counts the wrong elements of all
 * The failed cases and neighbour-failed return errors on MPI_COMM_SELF too: MPICH raises an error of a request
 * array's test there (docs/nonblocking.md, Limits), and the case is about the program's. */
#define _POSIX_C_SOURCE 200809L /* _exit */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "start_world.h"

enum { COUNT = 4096, STARTS = 5 };
static int rank, size;

/* rank r gives (r + 1)(i % 5 + 1) + round at element i */
static void fill(double *data, int count, int round) {
    for (int i = 0; i < count; i++) data[i] = (double)((rank + 1) * (i % 5 + 1) + round);
}

static int wrong(const double *data, int count, int round) {
    int bad = 0;
    for (int i = 0; i < count; i++)
        bad += data[i] != (double)(size * (size + 1) / 2 * (i % 5 + 1) + size * round);
    return bad;
}

static int class_of(int code) {
    int class = code;
    if (code != MPI_SUCCESS) MPI_Error_class(code, &class);
    return class;
}

static void say(const char *name, int code, int bad) {
    char text[MPI_MAX_ERROR_STRING] = "";
    int length = 0;
    if (code != MPI_SUCCESS) MPI_Error_string(code, text, &length);
    printf("request_errors: rank %d %s class %d refused %d wrong %d text %s\n", rank, name,
           class_of(code), class_of(code) == MPI_ERR_REQUEST, bad, text);
    fflush(stdout);
}

static void persistent_case(const char *name) {
    static double send[COUNT], receive[COUNT];
    MPI_Request request;
    fill(send, COUNT, 0);
    MPI_Allreduce_init(send, receive, COUNT, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                       MPI_INFO_NULL, &request);
    MPI_Start(&request);
    int code = strcmp(name, "cancel-persistent") == 0 ? MPI_Cancel(&request)
                                                      : MPI_Start(&request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    int bad = wrong(receive, COUNT, 0);
    for (int round = 1; round <= STARTS; round++) {
        fill(send, COUNT, round);
        MPI_Start(&request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        bad += wrong(receive, COUNT, round);
    }
    MPI_Request_free(&request);
    say(name, code, bad);
}

static void neighbour_failed(void) {
    static double send[COUNT], receive[COUNT];
    int message[2] = {1, 2}, short_buffer[1];
    MPI_Request requests[3];
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN); /* MPICH raises Waitall's there */
    fill(send, COUNT, 0);
    MPI_Allreduce_init(send, receive, COUNT, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                       MPI_INFO_NULL, &requests[0]);
    MPI_Start(&requests[0]);
    /* from the rank before, to the rank after: Open MPI does not report a message to
     * itself that its receive truncates */
    MPI_Irecv(short_buffer, 1, MPI_INT, (rank + size - 1) % size, 99, MPI_COMM_WORLD,
              &requests[1]);
    MPI_Isend(message, 2, MPI_INT, (rank + 1) % size, 99, MPI_COMM_WORLD, &requests[2]);
    int code = MPI_Waitall(3, requests, MPI_STATUSES_IGNORE);
    code = code != MPI_SUCCESS && class_of(code) == MPI_ERR_IN_STATUS ? MPI_SUCCESS
                                                                      : MPI_ERR_OTHER;
    /* MPICH leaves the requests after the failed one pending (MPI_ERR_PENDING) */
    MPI_Waitall(2, &requests[1], MPI_STATUSES_IGNORE);
    int bad = wrong(receive, COUNT, 0);
    for (int round = 1; round <= STARTS; round++) {
        fill(send, COUNT, round);
        int started = MPI_Start(&requests[0]);
        if (code == MPI_SUCCESS) code = started;
        if (started == MPI_SUCCESS) MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
        bad += wrong(receive, COUNT, round);
    }
    MPI_Request_free(&requests[0]);
    say("neighbour-failed", code, bad);
}

static void cancel_post(void) {
    static double send[COUNT], receive[COUNT];
    MPI_Request request;
    fill(send, COUNT, 0);
    MPI_Iallreduce(send, receive, COUNT, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &request);
    int code = MPI_Cancel(&request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    say("cancel-post", code, wrong(receive, COUNT, 0));
}

static void failed(const char *name) {
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int count = COUNT + (rank == 0 ? 7 : 0);
    double *send = calloc((size_t)count, sizeof *send);
    double *receive = calloc((size_t)count, sizeof *receive);
    MPI_Request request;
    int code;
    if (strcmp(name, "failed-post") == 0) {
        code = MPI_Iallreduce(send, receive, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                              &request);
    } else {
        code = MPI_Allreduce_init(send, receive, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                                  MPI_INFO_NULL, &request);
        if (code == MPI_SUCCESS) code = MPI_Start(&request);
    }
    if (code == MPI_SUCCESS) code = MPI_Wait(&request, MPI_STATUS_IGNORE);
    say(name, code, 0);
    /* the failed operation's messages may be in flight, so no MPI_Finalize; and not
     * MPI_Abort either, which may end the job before the launcher passed the other ranks'
     * lines on: every rank says its line, meets the others, and leaves */
    MPI_Barrier(MPI_COMM_WORLD);
    _exit(0);
}

static void refused_init(void) {
    static double send[COUNT + 7], receive[COUNT + 7];
    MPI_Request request = MPI_REQUEST_NULL;
    int count = COUNT + (rank == 0 ? 7 : 0);
    int code = MPI_Allreduce_init(send, receive, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                                  MPI_INFO_NULL, &request);
    if (code != MPI_SUCCESS) code = MPI_Start(&request);
    else code = MPI_ERR_OTHER; /* not refused: the case's premise failed */
    say("refused-init", code, 0);
}

static void say_status(const char *what, const MPI_Status *status) {
    int count = -1, cancelled = -1;
    MPI_Get_count(status, MPI_BYTE, &count);
    MPI_Test_cancelled(status, &cancelled);
    printf("request_errors: rank %d status %s source %d tag %d count %d cancelled %d\n", rank,
           what, status->MPI_SOURCE, status->MPI_TAG, count, cancelled);
}

static void statuses(void) {
    static double send[COUNT], receive[COUNT];
    fill(send, COUNT, 0);
    MPI_Request request;
    MPI_Status status;
    MPI_Iallreduce(send, receive, COUNT, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &request);
    MPI_Wait(&request, &status);
    say_status("post", &status);
    MPI_Allreduce_init(send, receive, COUNT, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                       MPI_INFO_NULL, &request);
    MPI_Start(&request);
    MPI_Wait(&request, &status);
    say_status("start", &status);
    MPI_Request_free(&request);
    fflush(stdout);
}

enum { MANY = 200, TESTED = 100, PERSISTENT = 20, SMALL = 64 };

static void many(void) {
    static double send[MANY][SMALL], receive[MANY][SMALL];
    static MPI_Request requests[MANY], reversed[MANY];
    int bad = 0;
    for (int k = 0; k < MANY; k++) {
        fill(send[k], SMALL, k);
        MPI_Iallreduce(send[k], receive[k], SMALL, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                       &requests[k]);
    }
    for (int k = 0; k < MANY; k++) reversed[k] = requests[MANY - 1 - k];
    int code = MPI_Waitall(MANY, reversed, MPI_STATUSES_IGNORE);
    for (int k = 0; k < MANY; k++) bad += wrong(receive[k], SMALL, k);
    for (int k = 0; k < TESTED; k++) {
        fill(send[k], SMALL, k + 1);
        MPI_Iallreduce(send[k], receive[k], SMALL, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                       &requests[k]);
    }
    for (int left = TESTED; left > 0 && code == MPI_SUCCESS;) {
        int done = 0, indices[TESTED];
        code = MPI_Testsome(TESTED, requests, &done, indices, MPI_STATUSES_IGNORE);
        if (done != MPI_UNDEFINED) left -= done;
    }
    for (int k = 0; k < TESTED; k++) bad += wrong(receive[k], SMALL, k + 1);
    for (int k = 0; k < PERSISTENT; k++)
        MPI_Allreduce_init(send[k], receive[k], SMALL, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                           MPI_INFO_NULL, &requests[k]);
    for (int round = 0; round < 3 && code == MPI_SUCCESS; round++) {
        for (int k = 0; k < PERSISTENT; k++) fill(send[k], SMALL, round + k);
        MPI_Startall(PERSISTENT, requests);
        code = MPI_Waitall(PERSISTENT, requests, MPI_STATUSES_IGNORE);
        for (int k = 0; k < PERSISTENT; k++) bad += wrong(receive[k], SMALL, round + k);
    }
    for (int k = 0; k < PERSISTENT; k++) MPI_Request_free(&requests[k]);
    say("many", code, bad);
}

int main(int argc, char **argv) {
    start_world(&argc, &argv, argc > 2 ? argv[2] : NULL, &rank, &size);
    const char *name = argc > 1 ? argv[1] : "";
    if (strcmp(name, "cancel-persistent") == 0 || strcmp(name, "start-active") == 0)
        persistent_case(name);
    else if (strcmp(name, "cancel-post") == 0)
        cancel_post();
    else if (strcmp(name, "refused-init") == 0)
        refused_init();
    else if (strcmp(name, "neighbour-failed") == 0)
        neighbour_failed();
    else if (strcmp(name, "status") == 0)
        statuses();
    else if (strcmp(name, "many") == 0)
        many();
    else if (strncmp(name, "failed-", 7) == 0)
        failed(name);
    else
        fprintf(stderr, "request_errors: unknown case '%s'\n", name);
    MPI_Finalize();
    return 0;
}
