/* monitor.c (test) - the arrival monitor under mpiexec: slt, prr and straggler run on the
 * predictions when every rank gives one, and every rank falls back to the ring together
 * when some rank misbehaves (skips edge, calls it twice, bad fraction, edge before
 * compute_begin, NaN / negative / absurd predictions). HISTORY and AUTOMATIC (the default)
 * learn a late rank from earlier calls; AUTOMATIC's `auto` sees the late rank and stays on
 * native when arrivals are even. Every call's result is checked against MPI_Allreduce and
 * the decision (predicted or fallback) against what the case expects, on every rank. The
 * clock sync the monitor (and papcoll-bench) put arrivals on rank 0's clock with is checked
 * first: a time read on any rank and moved by its offset must fall inside the exchange
 * that asked for it on rank 0, give or take half the best round trip of the measurement.
 * Prints "N passed, M failed". */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock_offsets.h"
#include "common/checks.h"
#include "common/sleep.h"
#include "papcoll.h"

static int rank, ranks;

static int misbehaving_rank(void) { return ranks - 1; }


/* What the misbehaving rank (rank 1, or the last rank) does in the compute phase. */
typedef enum behaviour {
    WELL,               /* compute_begin, edge(0.5) */
    SKIPS_EDGE,         /* compute_begin only */
    EDGE_TWICE,         /* edge(0.5) then edge(0.9): the second is ignored */
    FRACTION_ABOVE_ONE, /* edge(1.5) */
    FRACTION_ZERO,      /* edge(0) */
    FRACTION_NAN,       /* edge(NaN) */
    EDGE_BEFORE_BEGIN,  /* edge(0.5) without compute_begin */
    PREDICTS_NAN,       /* predict_arrival(NaN) */
    PREDICTS_NEGATIVE,  /* predict_arrival(-1) */
    PREDICTS_ABSURD,    /* predict_arrival(1e9 s) */
    BEHAVIOUR_COUNT
} behaviour;

static const char *const behaviour_names[BEHAVIOUR_COUNT] = {
    "every rank calls edge", "a rank skips edge",      "a rank calls edge twice",
    "edge(1.5)",             "edge(0)",                "edge(NaN)",
    "edge before compute_begin", "prediction NaN",     "prediction negative",
    "prediction 10^9 s ahead"};

static void check(int condition, const char *algorithm, const char *what, const char *detail) {
    char named[200];
    snprintf(named, sizeof named, "%s, %s", algorithm, what);
    check_everywhere(condition, named, detail);
}

/* One compute phase and one all-reduce; returns the code the misbehaving call returned. */
static int phase(papcoll_comm *pc, behaviour b, int misbehaving, double late_ms) {
    int me = rank == misbehaving;
    int code = MPI_SUCCESS;
    if (!(me && b == EDGE_BEFORE_BEGIN)) papcoll_compute_begin(pc);
    sleep_ms(2 + (rank == 1 ? late_ms / 2 : 0));
    if (!me || b == WELL) {
        papcoll_edge(pc, 0.5);
    } else {
        switch (b) {
        case SKIPS_EDGE: break;
        case EDGE_TWICE:
            code = papcoll_edge(pc, 0.5);
            if (code == MPI_SUCCESS) code = papcoll_edge(pc, 0.9);
            break;
        case FRACTION_ABOVE_ONE: code = papcoll_edge(pc, 1.5); break;
        case FRACTION_ZERO: code = papcoll_edge(pc, 0.0); break;
        case FRACTION_NAN: code = papcoll_edge(pc, NAN); break;
        case EDGE_BEFORE_BEGIN: code = papcoll_edge(pc, 0.5); break;
        case PREDICTS_NAN: code = papcoll_predict_arrival(pc, NAN); break;
        case PREDICTS_NEGATIVE: code = papcoll_predict_arrival(pc, -1.0); break;
        default: code = papcoll_predict_arrival(pc, 1e9); break;
        }
    }
    sleep_ms(2 + (rank == 1 ? late_ms / 2 : 0));
    return code;
}

static void run_call(papcoll_comm *pc, const char *algorithm, const char *what,
                     int expect_predicted, int expect_late_rank) {
    enum { count = 10007 };
    static float input[count], result[count], reference[count];
    for (int i = 0; i < count; i++) input[i] = (float)((i * 31 + rank * 17) % 101) - 50.0f;
    int code = papcoll_allreduce(pc, input, result, count, MPI_FLOAT, MPI_SUM);
    MPI_Allreduce(input, reference, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    check(code == MPI_SUCCESS, algorithm, what, papcoll_error_string(code));
    /* small integers: every order of summation gives the exact sum */
    check(memcmp(result, reference, sizeof result) == 0, algorithm, what,
          "result differs from MPI_Allreduce");
    int predicted = -1;
    double *arrivals = malloc((size_t)ranks * sizeof *arrivals), tau = 0;
    papcoll_last_prediction(pc, &predicted, arrivals, &tau);
    char detail[160];
    snprintf(detail, sizeof detail, "expected %s, got %s", expect_predicted ? "predictions" : "the ring fallback",
             predicted ? "predictions" : "the ring fallback");
    if (expect_predicted >= 0) check(predicted == expect_predicted, algorithm, what, detail);
    if (expect_predicted == 1) {
        check(tau > 0 && tau < 1, algorithm, what, "tau is not a plausible time");
        if (expect_late_rank >= 0) {
            int latest = 0;
            for (int r = 1; r < ranks; r++)
                if (arrivals[r] > arrivals[latest]) latest = r;
            snprintf(detail, sizeof detail, "rank %d predicted latest (%.1f ms), not rank %d",
                     latest, arrivals[latest] * 1e3, expect_late_rank);
            check(latest == expect_late_rank, algorithm, what, detail);
        }
    }
    free(arrivals);
}

/* straggler under every shape of its schedule: predictions (no sleeping: only they shape
 * the schedule) naming no late rank, one, two, all but one, for counts in its small mode,
 * its large mode, below P, and 0, with separate buffers and in place; every result against
 * MPI_Allreduce, bitwise on every rank (small integers: any summation order is exact). */
static void straggler_shapes(void) {
    papcoll_config config;
    papcoll_config_init(&config);
    config.algorithm = "straggler";
    config.arrival_source = PAPCOLL_ARRIVALS_EDGE;
    papcoll_comm *pc;
    if (papcoll_comm_create(MPI_COMM_WORLD, &config, &pc) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 2);
    const int counts[] = {0, 2, 1000, 70000};
    enum { PATTERNS = 4 };
    const char *names[PATTERNS] = {"nobody late", "rank 1 late", "ranks 1 and 0 late",
                                   "staggered"};
    int most = 70000;
    float *input = malloc((size_t)most * sizeof *input), *result = malloc((size_t)most * sizeof *result),
          *reference = malloc((size_t)most * sizeof *reference);
    for (int pattern = 0; pattern < PATTERNS; pattern++)
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
            for (int in_place = 0; in_place < 2; in_place++) {
                int count = counts[c];
                double late = pattern == 0   ? 0
                              : pattern == 1 ? (rank == 1 ? 1.0 : 0)
                              : pattern == 2 ? (rank == 1 ? 1.0 : rank == 0 ? 0.5 : 0)
                                             : 0.1 * rank;
                papcoll_compute_begin(pc);
                papcoll_predict_arrival(pc, late);
                for (int i = 0; i < count; i++)
                    input[i] = (float)((i * 7 + rank * 13 + pattern) % 61) - 30.0f;
                MPI_Allreduce(input, reference, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
                int code;
                if (in_place) {
                    memcpy(result, input, (size_t)count * sizeof *input);
                    code = papcoll_allreduce(pc, MPI_IN_PLACE, result, count, MPI_FLOAT, MPI_SUM);
                } else {
                    code = papcoll_allreduce(pc, input, result, count, MPI_FLOAT, MPI_SUM);
                }
                char what[96];
                snprintf(what, sizeof what, "%s, count %d%s", names[pattern], count,
                         in_place ? ", in place" : "");
                check(code == MPI_SUCCESS, "straggler", what, papcoll_error_string(code));
                check(memcmp(result, reference, (size_t)count * sizeof *result) == 0,
                      "straggler", what, "result differs from MPI_Allreduce");
                int predicted = 0;
                papcoll_last_prediction(pc, &predicted, NULL, NULL);
                check(predicted == 1, "straggler", what, "ran the ring fallback");
            }
    free(input);
    free(result);
    free(reference);
    papcoll_comm_free(&pc);
}

/* The clock offsets (src/mpi/clock_offsets.c): rank 0 asks every rank for its time on rank
 * 0's clock (MPI_Wtime + offset); the answer was read between rank 0's send and receive,
 * and the offset is wrong by at most half its measurement's round trip, so the answer must
 * lie in [send - half, receive + half] whatever the machine's load. */
static void clock_offsets_agree(void) {
    enum { TAG = 41 };
    double own, *offsets = malloc((size_t)ranks * sizeof *offsets),
                *round_trips = malloc((size_t)ranks * sizeof *round_trips);
    int code = clock_offsets_measure(MPI_COMM_WORLD, TAG, &own, offsets, round_trips);
    check(code == MPI_SUCCESS, "clock offsets", "measured", "an MPI call failed");
    int agree = 1;
    char detail[160] = "";
    for (int peer = 1; peer < ranks; peer++) {
        if (rank == 0) {
            double asked = MPI_Wtime(), answer;
            MPI_Send(&asked, 1, MPI_DOUBLE, peer, TAG, MPI_COMM_WORLD);
            MPI_Recv(&answer, 1, MPI_DOUBLE, peer, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            double answered = MPI_Wtime(), half = round_trips[peer] / 2 + 1e-6;
            if (!(answer >= asked - half && answer <= answered + half)) {
                agree = 0;
                snprintf(detail, sizeof detail, "rank %d's time is %.3g s outside [%.6f, %.6f]",
                         peer, answer < asked ? asked - answer : answer - answered, asked,
                         answered);
            }
        } else if (rank == peer) {
            double ignored, now;
            MPI_Recv(&ignored, 1, MPI_DOUBLE, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            now = MPI_Wtime() + own;
            MPI_Send(&now, 1, MPI_DOUBLE, 0, TAG, MPI_COMM_WORLD);
        }
    }
    check(agree, "clock offsets", "a time moved to rank 0's clock", detail);
    free(offsets);
    free(round_trips);
}

/* expect_predicted: 1 predictions, 0 the ring fallback, -1 either (auto). */
/* auto under AUTOMATIC: native while nothing is known and while arrivals are even; from
 * arrivals once a rank is late in every call, also when every rank calls edge() (then
 * the predictions travel per call) and when one rank then stops calling it. */
/* One of papcoll's flat algorithms, which the closed loop may try as native's alternative
 * (src/mpi/flat_feedback.c). */
static int is_flat(const char *name) {
    return strcmp(name, "recursive_doubling") == 0 || strcmp(name, "rabenseifner") == 0 ||
           strcmp(name, "ring") == 0;
}

static void automatic_auto(void) {
    papcoll_comm *pc;
    if (papcoll_comm_create(MPI_COMM_WORLD, NULL, &pc) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 2);
    papcoll_choice choice;
    char detail[400];
    for (int call = 0; call < 8; call++) { /* even: periods of 1, 2, 4 calls */
        MPI_Barrier(MPI_COMM_WORLD);
        run_call(pc, "auto", "even arrivals", call > 0 ? -1 : 0, -1);
        papcoll_last_choice(pc, &choice);
        snprintf(detail, sizeof detail, "chose %s (from arrivals: %d, predicted %.3g s, "
                 "native %.3g s; model %s, alternative %s, probe %d, overruled %d)",
                 choice.algorithm, (int)choice.from_arrivals, choice.predicted_seconds,
                 choice.native_seconds, choice.model_algorithm, choice.alternative,
                 (int)choice.probe, (int)choice.overruled);
        /* the barrier leaves ranks some microseconds apart, which may be seen as late:
         * then the model decides, and leaves native only for a predicted gain, or for its
         * alternative: probed, or measured faster (the closed loop, src/mpi/auto_feedback.c,
         * where the alternative is reported as overruling the model) */
        /* native may run as one of the MPI library's algorithms: "native:NAME" */
        int native = strncmp(choice.algorithm, "native", 6) == 0;
        /* (or, where the alternative is one of papcoll's flat algorithms, a try of another
         * of them: src/mpi/flat_feedback.c) */
        int probe = (choice.probe || choice.overruled) &&
                    strcmp(choice.model_algorithm, "native") == 0 &&
                    (strcmp(choice.algorithm, choice.alternative) == 0 ||
                     (choice.probe && is_flat(choice.algorithm) && is_flat(choice.alternative)));
        check(call == 0 ? native && !choice.from_arrivals
                        : native || probe ||
                              (choice.from_arrivals &&
                               choice.native_seconds > choice.predicted_seconds),
              "auto", "even arrivals run native unless the model predicts a gain or the loop "
              "measures one", detail);
    }
    for (int call = 0; call < 24; call++) { /* rank 1 late; the period of 8 from call 8 on */
        MPI_Barrier(MPI_COMM_WORLD);
        papcoll_compute_begin(pc);
        int skips = call >= 20 && rank == misbehaving_rank();
        if (!skips) papcoll_predict_arrival(pc, rank == 1 ? 0.02 : 0);
        if (rank == 1) sleep_ms(20);
        run_call(pc, "auto", call < 20 ? "rank 1 late" : "rank 1 late, a rank skips edge",
                 -1, -1);
        papcoll_last_choice(pc, &choice);
        snprintf(detail, sizeof detail, "call %d chose %s (from arrivals: %d)", call,
                 choice.algorithm, (int)choice.from_arrivals);
        /* the first period of 8 uneven calls ends at call 7: from call 8 on it is known */
        if (call >= 8) check(choice.from_arrivals == 1, "auto", "a late rank is seen", detail);
    }
    const char *name = NULL;
    papcoll_resolve_algorithm(pc, 10007, MPI_FLOAT, MPI_SUM, &name);
    /* auto runs native or an algorithm built from the arrivals, nothing else */
    check(name != NULL && (strncmp(name, "native", 6) == 0 || strcmp(name, "straggler") == 0 ||
                           strcmp(name, "prr") == 0 || strcmp(name, "slt") == 0),
          "auto", "resolve names an algorithm", name ? name : "(null)");
    papcoll_comm_free(&pc);
}

/* A communicator made after the world's papcoll communicator takes its clock offsets and
 * nodes from the world's (world_reference.h) instead of measuring: its ranks in reverse
 * order, HISTORY must still find its rank 1 (world rank P - 2) late, and the hierarchical
 * algorithms, which use the nodes, still give MPI's result. */
static void derived_communicator(void) {
    papcoll_config config;
    papcoll_config_init(&config);
    config.algorithm = "straggler";
    config.arrival_source = PAPCOLL_ARRIVALS_HISTORY;
    papcoll_comm *world, *pc;
    MPI_Comm reversed;
    MPI_Comm_split(MPI_COMM_WORLD, 0, ranks - rank, &reversed);
    if (papcoll_comm_create(MPI_COMM_WORLD, &config, &world) != MPI_SUCCESS ||
        papcoll_comm_create(reversed, &config, &pc) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 2);
    double before = 0, after = -1;
    for (int call = 0; call < 4; call++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == ranks - 2) sleep_ms(20);
        /* the sum over every rank, in any order: the same as MPI_COMM_WORLD's */
        run_call(pc, "straggler", call == 0 ? "derived communicator, first call"
                                            : "derived communicator", call > 0,
                 call > 0 ? 1 : -1);
        if (call == 0) papcoll_last_own_seconds(pc, &before, &after);
    }
    char detail[120];
    snprintf(detail, sizeof detail, "before %g s, after %g s", before, after);
    check(before > 0 && after >= 0, "straggler", "own work: the first call's calibration",
          detail);
    const char *hierarchical[] = {"hr1", "hr2", "smp_binomial"};
    for (int a = 0; a < 3; a++) {
        papcoll_set_algorithm(pc, hierarchical[a]);
        run_call(pc, hierarchical[a], "derived communicator's nodes", -1, -1);
    }
    papcoll_last_own_seconds(pc, &before, &after);
    snprintf(detail, sizeof detail, "before %g s, after %g s", before, after);
    check(before == 0 && after == 0, "smp_binomial", "own work: none without a monitor",
          detail);
    check(papcoll_last_own_seconds(NULL, &before, NULL) == MPI_ERR_ARG, "none",
          "own work of no communicator", "accepted");
    papcoll_comm_free(&pc);
    papcoll_comm_free(&world);
    MPI_Comm_free(&reversed);
}

int main(int argc, char **argv) {
    checks_start(&argc, &argv, &rank, &ranks);
    if (ranks < 2) {
        if (rank == 0) printf("mpi_monitor needs 2 or more ranks\n");
        MPI_Finalize();
        return 2;
    }
    clock_offsets_agree();
    const char *algorithms[] = {"prr", "slt", "straggler"};
    int misbehaving = ranks - 1;
    for (int a = 0; a < 3; a++) {
        papcoll_config config;
        papcoll_config_init(&config);
        config.algorithm = algorithms[a];
        config.arrival_source = PAPCOLL_ARRIVALS_EDGE;
        papcoll_comm *pc;
        if (papcoll_comm_create(MPI_COMM_WORLD, &config, &pc) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 2);
        for (int b = 0; b < BEHAVIOUR_COUNT; b++) {
            int code = phase(pc, (behaviour)b, misbehaving, 20);
            /* the misbehaving rank's call is refused from edge(1.5) on; check() is
             * collective, so every rank takes part */
            int expected = b >= FRACTION_ABOVE_ONE ? MPI_ERR_ARG : MPI_SUCCESS;
            check(rank != misbehaving || code == expected, algorithms[a], behaviour_names[b],
                  "wrong return code from edge / predict_arrival");
            int well = b == WELL || b == EDGE_TWICE;
            run_call(pc, algorithms[a], behaviour_names[b], well, well ? 1 : -1);
        }
        /* predictions left unused when the communicator is freed must not trouble MPI */
        papcoll_compute_begin(pc);
        if (rank == 0) papcoll_edge(pc, 0.5);
        papcoll_comm_free(&pc);

        /* HISTORY: no edge at all; rank 1 is 20 ms late in every call */
        config.arrival_source = PAPCOLL_ARRIVALS_HISTORY;
        if (papcoll_comm_create(MPI_COMM_WORLD, &config, &pc) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 2);
        for (int call = 0; call < 4; call++) {
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 1) sleep_ms(20);
            run_call(pc, algorithms[a], call == 0 ? "history, first call" : "history",
                     call > 0, call > 0 ? 1 : -1);
        }
        papcoll_comm_free(&pc);

        /* AUTOMATIC: the first call knows nothing (the ring); the first period's waits
         * show rank 1 late, so the next calls run on predictions */
        config.arrival_source = PAPCOLL_ARRIVALS_AUTOMATIC;
        if (papcoll_comm_create(MPI_COMM_WORLD, &config, &pc) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 2);
        for (int call = 0; call < 4; call++) {
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 1) sleep_ms(20);
            run_call(pc, algorithms[a], call == 0 ? "automatic, first call" : "automatic",
                     call > 0, call > 0 ? 1 : -1);
        }
        papcoll_comm_free(&pc);
    }
    derived_communicator();
    automatic_auto();
    straggler_shapes();
    int status = checks_report();
    MPI_Finalize();
    return status;
}
