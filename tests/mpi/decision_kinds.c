#define _POSIX_C_SOURCE 200809L /* nanosleep */
/* decision_kinds.c (test) - auto's one decision for every kind of call (src/mpi/auto_call.h)
 * under mpiexec: a blocking call, a non-blocking post and a persistent start of the same
 * shape on one communicator, with the same arrivals, choose the same algorithm, and a post
 * of a shape decided before finds the decision kept (decided_by -1: no simulation).
 *
 *   1. balanced: a blocking call of shape A decides; a post of A then finds that decision
 *      (-1); a post of a new shape B decides on this rank; the next post of B finds it; a
 *      persistent request of A chooses what the blocking call chose.
 *   2. rank 1 late by LATE_SECONDS before every call (the monitor's AUTOMATIC source learns
 *      it in the blocking calls; the persistent request from its own starts): after
 *      LEARNING_CALLS blocking calls of shape C, a post of C and a persistent start of C
 *      choose what the last blocking call's model chose (papcoll_choice.model_algorithm:
 *      the closed loop may run a probe in a blocking call, which is the loop's business),
 *      and the blocking calls decided on rank 1 late; the post finds the blocking calls'
 *      decision; the persistent request's own closed loop has measured its starts.
 * Every result is compared with MPI_Allreduce's. Prints "N passed, M failed". */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/checks.h"
#include "papcoll.h"

/* C: 512 KiB, where moving the data takes long enough beside the lateness that the model
 * prefers a PAP-aware algorithm (at 16 KiB it keeps native: the gain is within its
 * uncertainty) */
enum { SHAPE_A = 1000, SHAPE_B = 3000, SHAPE_C = 65536, LARGEST = 65536 };
enum { LEARNING_CALLS = 24, PERSISTENT_STARTS = 6 };
/* In the middle of an arrival class (classes double from 100 us: 25.6 - 51.2 ms), so the
 * scatter of sleeps on a busy machine keeps every kind's prediction in one class. */
#define LATE_SECONDS 0.036

static int rank, ranks;
static double input[LARGEST], result[LARGEST], reference[LARGEST];

static void sleep_seconds(double seconds) {
    struct timespec pause = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
    nanosleep(&pause, NULL);
}

static void fill(int count) {
    for (int i = 0; i < count; i++) input[i] = (double)((i * 7 + rank * 13) % 41) - 20.0;
    MPI_Allreduce(input, reference, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

static void check_result(int code, int count, const char *what) {
    char detail[200];
    snprintf(detail, sizeof detail, "%s, count %d: %s", what, count,
             papcoll_error_string(code));
    check_everywhere(code == MPI_SUCCESS &&
                         memcmp(result, reference, (size_t)count * sizeof *result) == 0,
                     "result equals MPI_Allreduce's", detail);
}

static papcoll_choice blocking(papcoll_comm *pc, int count, int late) {
    fill(count);
    if (late && rank == 1) sleep_seconds(LATE_SECONDS);
    check_result(papcoll_allreduce(pc, input, result, count, MPI_DOUBLE, MPI_SUM), count,
                 "blocking");
    papcoll_choice choice;
    papcoll_last_choice(pc, &choice);
    return choice;
}

static papcoll_choice posted(papcoll_comm *pc, int count, int late) {
    fill(count);
    if (late && rank == 1) sleep_seconds(LATE_SECONDS);
    MPI_Request request;
    int code = papcoll_iallreduce(pc, input, result, count, MPI_DOUBLE, MPI_SUM, &request);
    papcoll_choice choice;
    papcoll_last_choice(pc, &choice); /* before the wait: nothing else decides meanwhile */
    if (code == MPI_SUCCESS) code = papcoll_wait(&request, MPI_STATUS_IGNORE);
    check_result(code, count, "post");
    return choice;
}

/* PERSISTENT_STARTS starts of a request of count; the last start's choice, and in
 * *measured the most starts any start's decision had measurements of (its closed loop). */
static papcoll_choice started(papcoll_comm *pc, int count, int late, int *measured) {
    papcoll_persistent *persistent = NULL;
    papcoll_choice choice;
    memset(&choice, 0, sizeof choice);
    int code = papcoll_allreduce_init(pc, input, result, count, MPI_DOUBLE, MPI_SUM,
                                      &persistent);
    for (int start = 0; code == MPI_SUCCESS && start < PERSISTENT_STARTS; start++) {
        fill(count);
        if (late && rank == 1) sleep_seconds(LATE_SECONDS);
        MPI_Request request;
        code = papcoll_start(persistent, &request);
        if (code == MPI_SUCCESS) code = papcoll_wait(&request, MPI_STATUS_IGNORE);
        check_result(code, count, "persistent start");
        papcoll_persistent_last_choice(persistent, &choice, NULL);
        int seen = (int)(choice.observed_calls + choice.alternative_observed_calls);
        if (seen > *measured) *measured = seen;
    }
    papcoll_persistent_free(&persistent);
    return choice;
}

static void same_algorithm(const char *kind, const char *chosen, const char *blocking_chose) {
    char detail[200];
    snprintf(detail, sizeof detail, "%s chose %s, the blocking call %s", kind, chosen,
             blocking_chose);
    check_everywhere(strcmp(chosen, blocking_chose) == 0 && same_everywhere(name_hash(chosen)),
                     "the same algorithm as the blocking call", detail);
}

static void balanced(papcoll_comm *pc) {
    papcoll_choice first = blocking(pc, SHAPE_A, 0);
    papcoll_choice post = posted(pc, SHAPE_A, 0);
    char detail[200];
    snprintf(detail, sizeof detail, "post of A: decided_by %d", (int)post.decided_by);
    check_everywhere(post.decided_by == -1, "a post finds the blocking call's decision",
                     detail);
    same_algorithm("the post", post.model_algorithm, first.model_algorithm);
    papcoll_choice new_shape = posted(pc, SHAPE_B, 0), again = posted(pc, SHAPE_B, 0);
    snprintf(detail, sizeof detail, "posts of B: decided_by %d, then %d",
             (int)new_shape.decided_by, (int)again.decided_by);
    check_everywhere(new_shape.decided_by == rank && again.decided_by == -1,
                     "a post of a new shape decides here, the next finds it kept", detail);
    same_algorithm("the second post", again.algorithm, new_shape.algorithm);
    int measured = 0;
    papcoll_choice start = started(pc, SHAPE_A, 0, &measured);
    same_algorithm("the persistent request", start.model_algorithm, first.model_algorithm);
}

static void one_late(papcoll_comm *pc) {
    papcoll_choice last;
    memset(&last, 0, sizeof last);
    for (int call = 0; call < LEARNING_CALLS; call++) last = blocking(pc, SHAPE_C, 1);
    char detail[200];
    double arrivals[64];
    int predicted = 0, latest = 0;
    papcoll_last_prediction(pc, &predicted, arrivals, NULL);
    for (int r = 0; predicted && r < ranks; r++)
        if (arrivals[r] > arrivals[latest]) latest = r;
    snprintf(detail, sizeof detail, "predicted: %d, latest rank %d (%.4f s), from arrivals %d",
             predicted, latest, predicted ? arrivals[latest] : -1.0,
             (int)last.from_arrivals);
    check_everywhere(predicted && latest == 1 && last.from_arrivals,
                     "the blocking calls decided on the late rank", detail);
    papcoll_choice post = posted(pc, SHAPE_C, 1);
    snprintf(detail, sizeof detail, "post of C: decided_by %d", (int)post.decided_by);
    check_everywhere(post.decided_by == -1,
                     "a post finds the blocking calls' decision for the late pattern", detail);
    same_algorithm("the post", post.model_algorithm, last.model_algorithm);
    /* a post of a shape nobody decided: simulated on every rank, then kept */
    papcoll_choice fresh = posted(pc, SHAPE_C / 2, 1), kept = posted(pc, SHAPE_C / 2, 1);
    snprintf(detail, sizeof detail, "posts of C/2: decided_by %d (%.1f us), then %d (%.1f us)",
             (int)fresh.decided_by, fresh.decision_seconds * 1e6, (int)kept.decided_by,
             kept.decision_seconds * 1e6);
    check_everywhere(fresh.decided_by == rank && kept.decided_by == -1,
                     "a late pattern's post decides once, then finds it kept", detail);
    if (rank == 0) printf("# P = %d, a post's decision: %s\n", ranks, detail);
    int measured = 0;
    papcoll_choice start = started(pc, SHAPE_C, 1, &measured);
    same_algorithm("the persistent request", start.model_algorithm, last.model_algorithm);
    /* the request's own closed loop, two starts late: start 3 decides with start 1's time,
     * start 4 with start 2's, ... (a start's entry is per arrival class: a class that moved
     * with the machine's noise starts an entry afresh, so no exact count is asserted) */
    snprintf(detail, sizeof detail, "at most %d measured starts behind a decision", measured);
    check_everywhere(measured >= 1, "the persistent request measures its starts for auto's loop",
                     detail);
}

int main(int argc, char **argv) {
    checks_start(&argc, &argv, &rank, &ranks);
    papcoll_comm *pc = NULL;
    int code = papcoll_comm_create(MPI_COMM_WORLD, NULL, &pc); /* auto, AUTOMATIC arrivals */
    check_everywhere(code == MPI_SUCCESS, "papcoll_comm_create", papcoll_error_string(code));
    if (code == MPI_SUCCESS) {
        balanced(pc);
        /* a late rank needs ranks on time beside it (and arrivals fit one_late's array) */
        if (ranks >= 3 && ranks <= 64) one_late(pc);
        papcoll_comm_free(&pc);
    }
    int status = checks_report();
    MPI_Finalize();
    return status;
}
