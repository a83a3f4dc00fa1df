#define _POSIX_C_SOURCE 200809L /* nanosleep */
/* failure_paths.c - what a failed non-blocking or persistent all-reduce leaves behind
 * (src/mpi/request_settling.c, docs/nonblocking.md "Failures"). Every failure here comes
 * from an erroneous program that MPI need not catch: counts that differ between ranks,
 * with messages cut into pieces of 10 elements, so that a 5-element receive meets a
 * 10-element piece (MPI_ERR_TRUNCATE). Run under AddressSanitizer, a request left in flight
 * after its memory is freed shows as a use after free.
 *
 *   persistent  (P = 3) A persistent request's start fails on rank 1 while rank 2, late,
 *               has not yet sent its start time: rank 1's receive of that time must be
 *               settled (cancelled) with the failure, since rank 1 then frees the request
 *               and its memory, and rank 2's time arrives after.
 *   hook        (P = 2) A post fails on rank 1 inside MPI's progress hook (the program
 *               completes it with MPI_Wait alone): the error comes back from MPI_Wait, and
 *               nothing is cancelled or tested there (a debug build asserts it: the
 *               clean-up belongs to papcoll's own poll or thread).
 *   unstarted   (P >= 2: one rank's ring needs no scratch) A post and a start that
 *               fail before the engine takes them (executor_begin cannot allocate the
 *               scratch of 2^60 elements): they are refused, and finishing them keeps
 *               the engine's locking contract (a debug build asserts it).
 *   refusals    (P >= 2) What is refused or let be without a failure: a post of INT64_MAX
 *               elements is refused naming the count (it said "sendbuf and recvbuf
 *               overlap"); MPI_Cancel of a posted all-reduce is a no-op MPI allows (it
 *               ended the job: "cancel function returned error code 19"): MPI_SUCCESS,
 *               the result right, MPI_Test_cancelled false.
 *
 * The persistent case leaves ranks 0 and 2 with an all-reduce that cannot complete (rank 1
 * stopped), so after the checks every rank leaves with _exit, not MPI_Finalize. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "expect.h"

static int ranks;

static void sleep_seconds(double seconds) {
    struct timespec pause = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
    nanosleep(&pause, NULL);
}

/* papcoll_test until done or `seconds` passed: MPI_SUCCESS, the error, or MPI_ERR_PENDING. */
static int wait_at_most(MPI_Request *request, double seconds) {
    double deadline = MPI_Wtime() + seconds;
    while (MPI_Wtime() < deadline) {
        int flag = 0;
        int code = papcoll_test(request, &flag, MPI_STATUS_IGNORE);
        if (code != MPI_SUCCESS || flag) return code;
    }
    return MPI_ERR_PENDING;
}

static papcoll_comm *communicator(const char *algorithm, int64_t max_message_elements) {
    papcoll_config config;
    papcoll_config_init(&config);
    config.algorithm = algorithm;
    config.max_message_elements = max_message_elements;
    papcoll_comm *pc = NULL;
    if (papcoll_comm_create(MPI_COMM_WORLD, &config, &pc) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 2);
    return pc;
}

static void persistent_start_times_settled(void) {
    papcoll_comm *pc = communicator("straggler", 10); /* PAP-aware: starts send times */
    float *input = calloc(100, sizeof *input), *output = calloc(100, sizeof *output);
    papcoll_persistent *persistent = NULL;
    int code = papcoll_allreduce_init(pc, input, output, rank == 1 ? 95 : 100, MPI_FLOAT,
                                      MPI_SUM, &persistent);
    expect("init (counts differ: an erroneous program)", code, MPI_SUCCESS, "success");
    if (rank == 2) sleep_seconds(0.5); /* its start time comes after rank 1 failed */
    MPI_Request request = MPI_REQUEST_NULL;
    code = papcoll_start(persistent, &request);
    expect("start", code, MPI_SUCCESS, "success");
    if (rank == 1) {
        code = wait_at_most(&request, 5);
        expect("the start with the short count fails, without waiting for the late rank",
               code != MPI_SUCCESS && code != MPI_ERR_PENDING ? MPI_ERR_TRUNCATE : code,
               MPI_ERR_TRUNCATE, "");
        expect("the failed request frees", papcoll_persistent_free(&persistent), MPI_SUCCESS,
               "success");
        free(input); /* its start time must not arrive here, nor in the freed request */
        free(output);
    } else {
        wait_at_most(&request, 1); /* cannot complete: rank 1 stopped */
    }
    /* rank 1 has freed everything when rank 2's time arrives: a receive left posted would
     * write into freed memory now */
    sleep_seconds(rank == 1 ? 1.0 : 0.2);
}

static void failure_inside_the_hook(void) {
    papcoll_comm *pc = communicator("recursive_doubling", 10);
    static float input[100], output[100];
    MPI_Request request;
    int code = papcoll_iallreduce(pc, input, output, rank == 0 ? 100 : 95, MPI_FLOAT, MPI_SUM,
                                  &request);
    expect("post (counts differ: an erroneous program)", code, MPI_SUCCESS, "success");
    if (!papcoll_mpi_advances_requests()) return; /* no hook: nothing to check */
    code = MPI_Wait(&request, MPI_STATUS_IGNORE);
    if (rank == 1) /* rank 0 gets all it waits for: short pieces are legal */
        expect("the short count's post fails in MPI_Wait",
               code != MPI_SUCCESS ? MPI_ERR_TRUNCATE : code, MPI_ERR_TRUNCATE, "");
    MPI_Barrier(MPI_COMM_WORLD);
    expect("the communicator frees", papcoll_comm_free(&pc), MPI_SUCCESS, "success");
}

static void unstarted_failures(void) {
    papcoll_comm *pc = communicator("ring", 0);
    static char output[8]; /* in place: no overlap check of 2^40 bytes */
    const MPI_Count huge = (MPI_Count)1 << 60; /* scratch beyond any address space */
    MPI_Request request;
    int code = papcoll_iallreduce_c(pc, MPI_IN_PLACE, output, huge, MPI_CHAR, MPI_MAX, &request);
    expect("a post that cannot get its scratch is refused", code, MPI_ERR_NO_MEM, "memory");
    papcoll_persistent *persistent = NULL;
    code = papcoll_allreduce_init(pc, MPI_IN_PLACE, output, huge, MPI_CHAR, MPI_MAX, &persistent);
    expect("init of the same", code, MPI_SUCCESS, "success");
    code = papcoll_start(persistent, &request);
    expect("a start that cannot get its scratch is refused", code, MPI_ERR_NO_MEM, "memory");
    expect("its request frees", papcoll_persistent_free(&persistent), MPI_SUCCESS, "success");
    expect("the communicator frees", papcoll_comm_free(&pc), MPI_SUCCESS, "success");
}

static void refusals(void) {
    papcoll_comm *pc = communicator("ring", 0);
    static double input[64], output[64];
    MPI_Request request;
    int code = papcoll_iallreduce_c(pc, input, output, INT64_MAX, MPI_DOUBLE, MPI_SUM,
                                    &request);
    expect("a post of INT64_MAX elements names the count", code, MPI_ERR_COUNT,
           "count 9223372036854775807 of 8-byte elements");
    for (int i = 0; i < 64; i++) input[i] = rank + 1 + i;
    code = papcoll_iallreduce(pc, input, output, 64, MPI_DOUBLE, MPI_SUM, &request);
    expect("a post", code, MPI_SUCCESS, "success");
    expect("MPI_Cancel of it is a no-op", MPI_Cancel(&request), MPI_SUCCESS, "success");
    MPI_Status status;
    expect("its wait", papcoll_wait(&request, &status), MPI_SUCCESS, "success");
    int cancelled = 1, wrong = 0;
    MPI_Test_cancelled(&status, &cancelled);
    expect("MPI_Test_cancelled says not cancelled", cancelled ? MPI_ERR_OTHER : MPI_SUCCESS,
           MPI_SUCCESS, "success");
    for (int i = 0; i < 64; i++) wrong += output[i] != ranks * (ranks + 1) / 2.0 + ranks * i;
    expect("its result is the sum", wrong ? MPI_ERR_OTHER : MPI_SUCCESS, MPI_SUCCESS,
           "success");
    expect("the communicator frees", papcoll_comm_free(&pc), MPI_SUCCESS, "success");
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    /* MPICH raises a failed request of MPI_Testsome on MPI_COMM_SELF's handler, Open MPI
     * on MPI_COMM_WORLD's, not on the request's communicator's (papcoll's return errors):
     * the erroneous calls here must come back as errors, not end the job */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const char *which = argc > 1 ? argv[1] : "";
    if (strcmp(which, "persistent") == 0 && ranks == 3) persistent_start_times_settled();
    else if (strcmp(which, "hook") == 0 && ranks == 2) failure_inside_the_hook();
    else if (strcmp(which, "unstarted") == 0 && ranks >= 2) unstarted_failures();
    else if (strcmp(which, "refusals") == 0 && ranks >= 2) refusals();
    else if (rank == 0)
        fprintf(stderr, "failure_paths: persistent (3 ranks), hook (2), unstarted (2+) or "
                        "refusals (2+)\n");
    int sums[2], mine[2] = {checks - failures, failures};
    MPI_Reduce(mine, sums, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("%d passed, %d failed\n", sums[0], sums[1]);
    fflush(stdout);
    if (strcmp(which, "persistent") == 0) { /* see above; together: mpiexec kills the rest
                                                 when the first leaves without finalizing */
        MPI_Barrier(MPI_COMM_WORLD);
        _exit(failures > 0);
    }
    MPI_Finalize();
    return failures > 0;
}
