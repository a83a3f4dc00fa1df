/* decision_sharing.c (test) - auto's decision off the late rank's path
 * (src/mpi/choice_sharing.c) under mpiexec.
 *
 * Every call predicts rank 0 late (EDGE source, papcoll_predict_arrival). A shape's first
 * call must be decided by a rank predicted on time, never rank 0 (papcoll_choice.decided_by,
 * the same everywhere, the same algorithm everywhere), its second taken from the cache
 * (decided_by -1). Then rank 0 alone asks
 * papcoll_resolve_algorithm about more shapes than the cache holds: had that touched its
 * cache, rank 0 would have forgotten the first shape while the others kept it, and waited
 * forever for a decision nobody sends; so the first shape must still come from the cache
 * on every rank, and new shapes must still be decided by rank 1. Every result is checked
 * against MPI_Allreduce. Prints "N passed, M failed". */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/checks.h"
#include "papcoll.h"

enum { LARGEST = 1 << 16, RESOLVED_SHAPES = 40, MOST_RANKS = 64 };
#define LATE_SECONDS 0.2
/* How far ahead the on-time ranks' common moment lies: far enough that no rank reaches it
 * before it predicts, even slowed by a sanitizer on a loaded machine (a rank past the
 * moment predicts "now", and the on-time ranks scatter). */
#define AHEAD_SECONDS 0.2
/* The least lateness taken for a pattern (arrival_jitter_seconds, arrival_class.h), which
 * sets the class boundaries: with the default 100 us they lie at 0.1024 and 0.2048 s, so
 * rank 0's 0.2 s sat 5 ms under a boundary, and a scatter of the on-time ranks' moments
 * by that much (a sanitized build on a loaded machine) made a new profile and a new
 * decision. With 20 ms (above any tau here), 0.2 s lies in [0.16, 0.32) s. */
#define CLASS_WIDTH_SECONDS 0.02

static int rank, ranks;

/* One call of count floats with rank 0 predicted late; checks the result and who decided:
 * a rank predicted on time, the same on every rank, where the shape is new (new_shape);
 * nobody (-1: kept) where it is not. "Predicted on time", not "rank 1": on a busy machine
 * the on-time ranks' predictions scatter, and the first of them may be another. */
static void call(papcoll_comm *pc, int count, int new_shape, const char *what) {
    static float input[LARGEST], result[LARGEST], reference[LARGEST];
    for (int i = 0; i < count; i++) input[i] = (float)((i * 5 + rank * 11) % 37) - 18.0f;
    MPI_Allreduce(input, reference, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    /* every on-time rank predicts the same moment (one clock on one node; papcoll puts
     * predictions on rank 0's clock anyway): predictions relative to each rank's own "now"
     * scatter by more than a class where ranks share cores, and a new class profile is a
     * new decision */
    double moment = MPI_Wtime() + AHEAD_SECONDS;
    MPI_Bcast(&moment, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    papcoll_compute_begin(pc);
    double ahead = moment - MPI_Wtime();
    papcoll_predict_arrival(pc, (ahead > 0 ? ahead : 0) + (rank == 0 ? LATE_SECONDS : 0));
    int code = papcoll_allreduce(pc, input, result, count, MPI_FLOAT, MPI_SUM);
    char detail[200];
    snprintf(detail, sizeof detail, "count %d: %s", count, papcoll_error_string(code));
    check_everywhere(code == MPI_SUCCESS, "the call succeeds", detail);
    check_everywhere(memcmp(result, reference, (size_t)count * sizeof *result) == 0,
                     "result equals MPI_Allreduce's", detail);
    papcoll_choice choice;
    papcoll_last_choice(pc, &choice);
    double arrivals[MOST_RANKS];
    int predicted = 0;
    papcoll_last_prediction(pc, &predicted, arrivals, NULL);
    int decider = choice.decided_by;
    int expected = new_shape ? predicted && decider >= 0 && decider < ranks &&
                                   arrivals[decider] < LATE_SECONDS / 2 &&
                                   (ranks == 1 || decider != 0)
                             : decider == -1;
    snprintf(detail, sizeof detail, "count %d: decided by %d (%s)", count, decider,
             choice.algorithm);
    check_everywhere(expected, what, detail);
    check_everywhere(same_everywhere(decider), "every rank names the same decider", detail);
    check_everywhere(same_everywhere(name_hash(choice.model_algorithm)),
                     "every rank has the same decision", detail);
}

int main(int argc, char **argv) {
    checks_start(&argc, &argv, &rank, &ranks);
    papcoll_config config;
    papcoll_config_init(&config);
    config.algorithm = "auto";
    config.arrival_source = PAPCOLL_ARRIVALS_EDGE;
    config.tuning.arrival_jitter_seconds = CLASS_WIDTH_SECONDS;
    papcoll_comm *pc;
    if (papcoll_comm_create(MPI_COMM_WORLD, &config, &pc) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 2);
    if (ranks > MOST_RANKS) MPI_Abort(MPI_COMM_WORLD, 2);
    call(pc, LARGEST, 1, "a new shape: decided by a rank predicted on time");
    call(pc, LARGEST, 0, "the same shape again: from the cache");
    if (rank == 0) /* alone: more shapes than the cache keeps */
        for (int k = 1; k <= RESOLVED_SHAPES; k++) {
            const char *name = NULL;
            if (papcoll_resolve_algorithm(pc, k * 3, MPI_FLOAT, MPI_SUM, &name) != MPI_SUCCESS)
                MPI_Abort(MPI_COMM_WORLD, 3);
        }
    call(pc, LARGEST, 0, "after one rank's resolves: still from the cache");
    call(pc, 1000, 1, "a new shape after the resolves: decided by a rank predicted on time");
    call(pc, 1000, 0, "that shape again: from the cache");
    papcoll_comm_free(&pc);
    int status = checks_report();
    MPI_Finalize();
    return status;
}
