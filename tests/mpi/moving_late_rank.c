/* moving_late_rank.c (test) - the AUTOMATIC arrival source follows a late rank that moves
 * within a few calls (src/mpi/monitor_source_automatic.c, follow_a_change).
 *
 * Rank 1 comes LATE_MS late to PHASE_CALLS calls, then the last rank does (rank 0 where
 * P = 2). The source learns in periods of 1, 2, 4, then 8 calls, so the change falls in
 * the middle of a period: that period's mean still names rank 1 the later, and before the
 * source looked at a period's last calls it did so for a whole period more (11 calls after
 * the change at P = 4). The prediction must name the new late rank, and no other rank
 * late, from at most 8 calls after the change to the end (auto's "learns fast"); every
 * result is checked against MPI_Allreduce. Prints "N passed, M failed". */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/checks.h"
#include "common/sleep.h"
#include "papcoll.h"

enum { COUNT = 1 << 14, PHASE_CALLS = 20, LATE_MS = 20, MOST_CALLS_TO_FOLLOW = 8 };

/* Whether the prediction names late_rank, and only it, late: later than every other rank
 * by half the delay or more (on-time ranks scatter by a few ms where ranks share cores). */
static int names_only(const double *arrivals, int ranks, int late_rank) {
    for (int r = 0; r < ranks; r++)
        if (r != late_rank && arrivals[late_rank] - arrivals[r] < LATE_MS * 0.5e-3) return 0;
    return 1;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    papcoll_config config;
    papcoll_config_init(&config);
    config.algorithm = "straggler"; /* built on the arrivals: the monitor runs; no closed loop */
    config.arrival_source = PAPCOLL_ARRIVALS_AUTOMATIC;
    papcoll_comm *pc;
    if (ranks < 2 || papcoll_comm_create(MPI_COMM_WORLD, &config, &pc) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 2);
    static float input[COUNT], result[COUNT], reference[COUNT];
    for (int i = 0; i < COUNT; i++) input[i] = (float)((i * 3 + rank * 7) % 29) - 14.0f;
    MPI_Allreduce(input, reference, COUNT, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    int moved_to = ranks > 2 ? ranks - 1 : 0, followed_from = -1;
    double *arrivals = malloc((size_t)ranks * sizeof *arrivals);
    char detail[160];
    for (int call = 0; call < 2 * PHASE_CALLS; call++) {
        int late_rank = call < PHASE_CALLS ? 1 : moved_to;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == late_rank) sleep_ms(LATE_MS);
        int code = papcoll_allreduce(pc, input, result, COUNT, MPI_FLOAT, MPI_SUM);
        snprintf(detail, sizeof detail, "call %d: %s", call, papcoll_error_string(code));
        check_everywhere(code == MPI_SUCCESS &&
                             memcmp(result, reference, sizeof result) == 0,
                         "the call succeeds with MPI_Allreduce's result", detail);
        int predicted = 0;
        papcoll_last_prediction(pc, &predicted, arrivals, NULL);
        if (call < PHASE_CALLS) continue;
        if (predicted && names_only(arrivals, ranks, moved_to)) {
            if (followed_from < 0) followed_from = call - PHASE_CALLS;
        } else {
            followed_from = -1; /* not yet, or lost again */
        }
    }
    snprintf(detail, sizeof detail, "followed from call %d after the change (-1: not at the "
             "end); at most %d wanted", followed_from, MOST_CALLS_TO_FOLLOW);
    check_everywhere(followed_from >= 0 && followed_from <= MOST_CALLS_TO_FOLLOW,
                     "the prediction follows the late rank within a few calls", detail);
    free(arrivals);
    papcoll_comm_free(&pc);
    int status = checks_report();
    MPI_Finalize();
    return status;
}
