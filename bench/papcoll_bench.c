/* papcoll_bench.c - the mini-benchmark of Proficz 2018 (Sect. 5.1, Fig. 9): the
 * average elapsed time e-bar of an all-reduce when the processes arrive at it at different
 * times.
 *
 * One iteration, for each algorithm in turn (algorithms are interleaved iteration by
 * iteration, so slow drifts of the machine hit all of them alike; the turn starts one
 * algorithm later each iteration, so none is always first after the barriers):
 *   1. fill the data with fresh random values (seeded per rank and iteration);
 *   2. half = (maxDelay + compute) / 2, the emulated compute phase cut in two halves;
 *   3. one-late: rank 1 adds maxDelay / 2 to each half, so it arrives maxDelay late;
 *      rand-late: every rank adds random(0 .. maxDelay) / 2 to each half;
 *   4. MPI_Barrier twice, so every rank leaves together;
 *   5. sleep(half); edge(0.5); sleep(half)   -- edge() tells the monitor (PAP issue) that
 *      half the compute is done; here it is a no-op hook;
 *   6. t0 = MPI_Wtime(); all-reduce (--op, MPI_SUM by default); t1 = MPI_Wtime();
 *   7. check the result against MPI_Allreduce of the same data (integer types and min/max
 *      bit for bit, floating-point sums and products within a rounding bound);
 *   8. e_i = t1 - t0 on every rank; MPI_Allgather; e-bar = mean of the e_i.
 * e-bar_lo, the lower bound (Proficz 2018, Sect. 3), is computed per iteration from the arrivals
 * that happened: mean over ranks of (a_last - a_i) + delta, delta a point-to-point transfer
 * of the whole vector measured at the start; the JSON gives its mean over iterations
 * ("lower_bound_ms") and the excess e-bar - e-bar_lo ("excess_ms"), what an algorithm
 * could still save.
 * The JSON's "ebar_ms" lists e-bar of every timed iteration in order (how fast a predictor
 * learns shows there, with --warmup 0).
 * Each rank also reports its t0: the JSON's "arrival_offsets_ms" holds, per timed
 * iteration, every rank's arrival relative to the earliest one. These are the arrivals that
 * happened (sleep overshoot and scheduling included), which `papcoll validate` replays in
 * the simulator. They are put on rank 0's clock by offsets measured once at the start (the
 * ping-pong with the shortest round trip, as the monitor does), not by each rank's exit from
 * the barriers: a rank descheduled as it leaves them (more ranks than cores) starts its
 * sleep late, and a barrier-relative time would not show it. MPI_WTIME_IS_GLOBAL is not
 * assumed; clocks that drift apart during a long run across hosts would blur the offsets
 * (one machine, network namespaces included, has one clock).
 * "own_before_ms" and "own_after_ms" hold, per timed iteration, every rank's time in
 * papcoll's own work before and after the algorithm (papcoll_last_own_seconds: the
 * monitor's messages, auto's decision), which a simulator of the schedule alone must add
 * (bench/smpi_scale.py); 0 for native.
 * The first --warmup iterations are run and thrown away.
 *
 * Choice where Fig. 9 and its text disagree: line 6 of Fig. 9 adds maxDelay to halfTime,
 * which is slept twice, so rank 1 would be 2 x maxDelay late; the text (and Table 3) say
 * rank 1 "is delayed for maxDelay". We follow the text: maxDelay / 2 per half. rand-late
 * (line 8) already adds half the random delay per half, which agrees with this reading.
 * The compute phase is 100 ms in the paper (long enough to hide the monitor's exchange);
 * --compute-ms sets it, and 0 gives back-to-back collectives for overhead measurements.
 *
 * Algorithms: papcoll's by name (`papcoll algorithms`) or "auto" (the JSON then says what it
 * chose in the timed calls, "chosen", and the gain its model predicted over native,
 * "predicted_gain"), "native" for the library's
 * MPI_Allreduce with its own choice, "native:NAME" for one of the library's algorithms
 * (native_algorithms.h).
 *
 * Element types (--datatype): MPI's predefined numeric types, named as MPI names them
 * without "MPI_" (and without "_T" for the fixed-width ones), in lower case: int8 ..
 * uint64, signed_char .. unsigned_long_long, float, double, long_double, c_float_complex,
 * c_double_complex. Ops (--op): sum, prod, min, max, band, bor, bxor where MPI defines
 * them (bitwise ops on integers, min/max not on complex numbers).
 *
 * Groups (--group-colors c0,c1,...): the hierarchical algorithms (hr1, hr2, smp_*, and any
 * other that takes groups) group ranks by papcoll_config.grouping. By default that is
 * MPI's shared-memory node (MPI_Comm_split_type), right on a cluster whose nodes run
 * several ranks, wrong where the groups are something else: on the testbed every host is a
 * namespace of its own, and a site of several hosts is no shared-memory node. The option
 * gives every rank's group, one color >= 0 per rank in rank order (PAPCOLL_GROUPS_COLOR);
 * the JSON's "group_colors" lists them (null: shared-memory grouping).
 *
 * Output: rank 0 writes a JSON array (one object per algorithm x count x maxDelay) to
 * --json FILE, or "-" for stdout, and a plain table to stdout otherwise. With --progress it
 * prints "progress DONE TOTAL" lines on stderr, which `papcoll bench` turns into a bar, and
 * as each count and max delay is done a "finished {JSON}" line per algorithm (e-bar and
 * IMB's t_min / t_max over ranks), which `papcoll bench --stream` prints as OSU prints a
 * size. `papcoll-bench --native-names` prints the names native:NAME takes, without MPI_Init
 * (so without mpiexec), for `papcoll bench` to check them before it starts a job.
 *
 * This file runs the loop above; its parts: bench_options.c (the command line),
 * bench_data.c (ops, values, the result check), bench_timing.c (delta, e-bar_lo),
 * bench_output.c (JSON and table); common/ holds what the other MPI programs and tests use
 * too, and the clock offsets are the library's own (src/mpi/clock_offsets.c).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_data.h"
#include "bench_options.h"
#include "bench_output.h"
#include "bench_timing.h"
#include "clock_offsets.h"
#include "common/json.h"
#include "common/element_values.h"
#include "common/sleep.h"
#include "common/usage.h"
#include "element_types.h"
#include "native_algorithms.h"
#include "papcoll.h"

enum { CLOCK_TAG = 8 };

/* One algorithm under test: papcoll's or the library's. */
typedef struct contender {
    const char *name;
    papcoll_comm *papcoll;     /* NULL for native ones */
    native_algorithm native;
} contender;

static int rank, ranks;

/* ---- the emulated application ------------------------------------------------------- */

/* Where the PAP monitor learns that `progress` of the compute phase is done (Proficz 2018,
 * Sect. 3): papcoll's auto and PAP-aware algorithms (slt, prr, straggler) get their
 * arrival predictions from it. */
static void edge(contender *c, double progress) {
    if (c->papcoll) papcoll_edge(c->papcoll, progress);
}

/* --mispredict: at the middle of the compute phase, instead of edge(), a wrong prediction:
 * rank 2 says it will come max_delay late and rank 1, which will, says it comes on time.
 * A rank on time is half way (compute + max_delay) / 2 in and has as long to go; rank 1 is
 * max_delay / 2 further in, so on time it would have compute / 2 to go. The PAP-aware
 * algorithms and auto then build for the wrong late rank: correct, only slower, by what the
 * JSON shows. */
static void mispredict(contender *c, double compute_ms, double max_delay_ms) {
    if (c->papcoll == NULL) return;
    double remaining_ms = rank == 1 ? compute_ms / 2
                        : rank == 2 ? (compute_ms + max_delay_ms) / 2 + max_delay_ms
                                    : (compute_ms + max_delay_ms) / 2;
    papcoll_predict_arrival(c->papcoll, remaining_ms / 1e3);
}

/* A contender the library refuses (an unknown native:NAME, a config papcoll rejects): the
 * problem alone, from rank 0, without the usage text (the command line was well formed,
 * and `papcoll bench` users never typed its options), and every rank leaves with exit 2. */
static _Noreturn void refuse(const char *message) {
    if (rank == 0) fprintf(stderr, "papcoll-bench: %s\n", message);
    MPI_Finalize();
    exit(2);
}

static void open_contender(const char *name, const options *o, contender *c) {
    memset(c, 0, sizeof *c);
    c->name = name;
    c->native.comm = MPI_COMM_NULL;
    char message[2600];
    if (strcmp(name, "native") == 0 || strncmp(name, "native:", 7) == 0) {
        if (!native_algorithm_open(name[6] ? name + 7 : "", MPI_COMM_WORLD, &c->native, message,
                                   sizeof message))
            refuse(message);
        return;
    }
    papcoll_config config;
    papcoll_config_init(&config);
    config.algorithm = name;
    if (strcmp(name, "recursive_multiplying") == 0) config.parameters.schedule = o->schedule;
    if (o->group_colors) {
        config.grouping = PAPCOLL_GROUPS_COLOR;
        config.group_color = o->group_colors[rank];
    }
    int code = papcoll_comm_create(MPI_COMM_WORLD, &config, &c->papcoll);
    if (code != MPI_SUCCESS) refuse(papcoll_error_string(code));
}

static int run_allreduce(contender *c, const void *send, void *receive, int count,
                         MPI_Datatype datatype, MPI_Op op) {
    if (c->papcoll) return papcoll_allreduce(c->papcoll, send, receive, count, datatype, op);
    native_algorithm_select(&c->native);
    int code = MPI_Allreduce(send, receive, count, datatype, op, c->native.comm);
    native_algorithm_restore(&c->native);
    return code;
}

/* ---- one call ------------------------------------------------------------------------ */

/* What one call needs beyond its contender: the run's buffers and element type. */
typedef struct workspace {
    const options *o;
    element_type type;
    int element_size;
    op_code op;
    char *send, *receive, *expected;
    double *all_elapsed;       /* (elapsed, t0, own work before, after) of every rank: one
                                  Allgather a call */
    double *predicted_arrivals; /* rank 0: the monitor's prediction of every rank's arrival */
    double *clock_offsets;     /* rank 0: every rank's clock offset */
} workspace;

/* The rank of the largest of values[0], values[stride], ... (ranks of them). */
static int latest(const double *values, int stride) {
    int found = 0;
    for (int k = 1; k < ranks; k++)
        if (values[k * stride] > values[found * stride]) found = k;
    return found;
}

/* Steps 1 to 8 of the header for contender a, count c, max delay d in `iteration`; the
 * timed iterations go into series s of *r. */
static void time_call(const workspace *w, contender *contenders, int a, int c, int d,
                      int iteration, results *r) {
    const options *o = w->o;
    int count = (int)o->counts[c], s = (a * o->count_count + c) * o->max_delay_count + d;
    double max_delay = o->max_delays_ms[d];
    uint64_t state = 0x9E3779B97F4A7C15ULL ^ ((uint64_t)o->seed << 40) ^ ((uint64_t)rank << 20) ^
                     (uint64_t)(iteration * MAX_ITEMS + a) * 7919u;
    next_random(&state);
    fill_random(w->send, count, &w->type, (size_t)w->element_size, w->op, rank, ranks, &state);
    /* rand-late's delay: drawn per (rank, iteration), not per algorithm, so that every
     * algorithm of an iteration meets the same arrivals (before, the draws differed by
     * algorithm, and so did e-bar_lo: 22 against 35 ms at P = 4, 100 ms, 10 iterations) */
    uint64_t delay_state = 0xD1B54A32D192ED03ULL ^ ((uint64_t)o->seed << 40) ^
                           ((uint64_t)rank << 20) ^ (uint64_t)(iteration * MAX_ITEMS + d) * 104729u;
    next_random(&delay_state);
    double half = (max_delay + o->compute_ms) / 2;
    if (o->one_late && rank == 1) half += max_delay / 2;
    if (!o->one_late) half += uniform(&delay_state) * max_delay / 2;
    /* noise (--jitter-ms): an exponential draw of that mean, after edge(), so no prediction
     * knows it, as the OS noise of papcoll sim --noise; drawn per (rank, iteration) like
     * the delays, so every contender of an iteration meets the same noise */
    double noise_ms = o->jitter_ms > 0 ? -o->jitter_ms * log1p(-uniform(&delay_state)) : 0;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    contender *runner = &contenders[a];
    if (runner->papcoll) papcoll_compute_begin(runner->papcoll);
    sleep_ms(half);
    if (o->mispredict) mispredict(runner, o->compute_ms, max_delay);
    else edge(runner, 0.5);
    sleep_ms(half + noise_ms);
    MPI_Datatype datatype = w->type.datatype;
    double start = MPI_Wtime();
    int code = run_allreduce(runner, w->send, w->receive, count, datatype, mpi_op(w->op));
    double elapsed = MPI_Wtime() - start;
    if (code != MPI_SUCCESS) {
        fprintf(stderr, "papcoll-bench: rank %d: %s failed: %s\n", rank, runner->name,
                runner->papcoll ? papcoll_error_string(code) : "MPI error");
        MPI_Abort(MPI_COMM_WORLD, 4);
    }
    MPI_Allreduce(w->send, w->expected, count, datatype, mpi_op(w->op), MPI_COMM_WORLD);
    int ok = same_result(w->receive, w->expected, count, &w->type, (size_t)w->element_size,
                         w->op, ranks),
        all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    double mine[4] = {elapsed, start, 0, 0};
    if (runner->papcoll) papcoll_last_own_seconds(runner->papcoll, &mine[2], &mine[3]);
    MPI_Allgather(mine, 4, MPI_DOUBLE, w->all_elapsed, 4, MPI_DOUBLE, MPI_COMM_WORLD);
    if (iteration < o->warmup) return;
    size_t call = (size_t)s * (size_t)o->iterations + (size_t)(iteration - o->warmup);
    double mean = 0, earliest = INFINITY;
    for (int k = 0; k < ranks; k++) {
        mean += w->all_elapsed[4 * k] / ranks;
        if (rank == 0) {
            w->all_elapsed[4 * k + 1] += w->clock_offsets[k];
            earliest = fmin(earliest, w->all_elapsed[4 * k + 1]);
        }
    }
    if (rank == 0)
        for (int k = 0; k < ranks; k++) {
            size_t at = call * (size_t)ranks + (size_t)k;
            r->arrivals[at] = (w->all_elapsed[4 * k + 1] - earliest) * 1e3;
            r->own_before[at] = w->all_elapsed[4 * k + 2] * 1e3;
            r->own_after[at] = w->all_elapsed[4 * k + 3] * 1e3;
            r->rank_sums[(size_t)s * (size_t)ranks + (size_t)k] += w->all_elapsed[4 * k] * 1e3;
        }
    r->ebars[call] = mean * 1e3;
    r->correct[s] &= all_ok;
    int predicted = 0;
    if (runner->papcoll)
        papcoll_last_prediction(runner->papcoll, &predicted,
                                rank == 0 ? w->predicted_arrivals : NULL, NULL);
    r->predicted_calls[s] += predicted;
    if (rank == 0 && predicted) /* the rank predicted latest is the one that came last */
        r->late_rank_predicted[s] += latest(w->predicted_arrivals, 1) ==
                                     latest(w->all_elapsed + 1, 4);
    if (runner->papcoll && strcmp(runner->name, "auto") == 0) {
        papcoll_choice choice;
        papcoll_last_choice(runner->papcoll, &choice);
        tally_choice(&r->tallies[s], &choice);
    }
}

static void out_of_memory(const char *what, long long how_many) {
    fprintf(stderr, "papcoll-bench: out of memory for %lld %s\n", how_many, what);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

/* --native-names, alone: {"library": ..., "names": [...]} on stdout (names null where the
 * library shows none), the names native:NAME takes. No MPI_Init, so no mpiexec either:
 * `papcoll bench` runs it to refuse an unknown name before it starts a job. */
static int print_native_names(void) {
    char library[256], known[2048];
    int found = native_algorithm_names(known, sizeof known);
    native_library_name(library, sizeof library);
    printf("{\"library\": ");
    json_write_string(stdout, library);
    printf(", \"names\": ");
    if (!found) printf("null");
    else {
        const char *separator = "[";
        for (char *saved = NULL, *name = strtok_r(known, ", ", &saved); name;
             name = strtok_r(NULL, ", ", &saved)) { /* known is "a, b, c" */
            printf("%s", separator);
            json_write_string(stdout, name);
            separator = ", ";
        }
        printf("]");
    }
    printf("}\n");
    native_algorithm_names_done();
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--native-names") == 0) return print_native_names();
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    options o;
    parse_options(argc, argv, ranks, &o);
    workspace w = {.o = &o};
    if (!find_element_type(o.datatype_name, &w.type))
        usage_error("bad datatype '%s' (or one this MPI lacks): want int8..uint64, "
                    "signed_char..unsigned_long_long, float, double, long_double, "
                    "c_float_complex or c_double_complex", o.datatype_name);
    w.op = parse_op(o.op_name, w.type.kind);
    MPI_Type_size(w.type.datatype, &w.element_size);

    /* Errors come back as codes (and the duplicates made below inherit this), so a failing
     * algorithm is reported by name before the run stops. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    contender contenders[MAX_ITEMS];
    const char *names[MAX_ITEMS];
    for (int a = 0; a < o.algorithm_count; a++) {
        open_contender(o.algorithm_names[a], &o, &contenders[a]);
        names[a] = contenders[a].name;
    }

    int64_t largest = 1;
    for (int c = 0; c < o.count_count; c++) largest = o.counts[c] > largest ? o.counts[c] : largest;
    size_t bytes = (size_t)largest * (size_t)w.element_size;
    w.send = malloc(bytes);
    w.receive = malloc(bytes);
    w.expected = malloc(bytes);
    w.all_elapsed = malloc(4 * (size_t)ranks * sizeof *w.all_elapsed);
    w.predicted_arrivals = malloc((size_t)ranks * sizeof *w.predicted_arrivals);
    results r = {.series = o.algorithm_count * o.count_count * o.max_delay_count};
    size_t calls = (size_t)r.series * (size_t)o.iterations;
    r.ebars = malloc(calls * sizeof *r.ebars);
    r.correct = malloc((size_t)r.series * sizeof *r.correct);
    r.predicted_calls = calloc((size_t)r.series, sizeof *r.predicted_calls);
    r.late_rank_predicted = calloc((size_t)r.series, sizeof *r.late_rank_predicted);
    r.tallies = calloc((size_t)r.series, sizeof *r.tallies);
    /* every rank's arrival in every timed call, kept by rank 0, which writes the JSON */
    r.arrivals = rank == 0 ? malloc(calls * (size_t)ranks * sizeof *r.arrivals) : NULL;
    r.own_before = rank == 0 ? malloc(calls * (size_t)ranks * sizeof *r.own_before) : NULL;
    r.own_after = rank == 0 ? malloc(calls * (size_t)ranks * sizeof *r.own_after) : NULL;
    r.rank_sums = rank == 0 ? calloc((size_t)r.series * (size_t)ranks, sizeof *r.rank_sums) : NULL;
    if (!w.send || !w.receive || !w.expected || !w.all_elapsed || !w.predicted_arrivals ||
        !r.ebars || !r.correct || !r.predicted_calls || !r.late_rank_predicted || !r.tallies || (rank == 0 && (!r.arrivals || !r.own_before || !r.own_after || !r.rank_sums)))
        out_of_memory("elements", (long long)largest);
    for (int s = 0; s < r.series; s++) r.correct[s] = 1;

    w.clock_offsets = rank == 0 ? malloc((size_t)ranks * sizeof *w.clock_offsets) : NULL;
    if (rank == 0 && !w.clock_offsets) out_of_memory("clock offsets", ranks);
    double own_offset;
    clock_offsets_measure(MPI_COMM_WORLD, CLOCK_TAG, &own_offset, w.clock_offsets, NULL);

    for (int c = 0; c < o.count_count; c++)
        r.p2p_ms[c] = point_to_point_ms(w.send, (int)o.counts[c], w.type.datatype);

    int steps = o.count_count * o.max_delay_count * (o.warmup + o.iterations), step = 0;
    for (int c = 0; c < o.count_count; c++)
        for (int d = 0; d < o.max_delay_count; d++) {
            for (int iteration = 0; iteration < o.warmup + o.iterations; iteration++) {
                /* the order turns by one each iteration: the first call after the
                 * barriers measured slower (16 KiB, P = 4, shared memory: auto first 1.20 x
                 * native, native first 1.01 x, both running MPI_Allreduce), and a fixed
                 * order charged that to whoever came first */
                for (int turn = 0; turn < o.algorithm_count; turn++)
                    time_call(&w, contenders, (turn + iteration) % o.algorithm_count, c, d,
                              iteration, &r);
                if (o.progress && rank == 0) {
                    fprintf(stderr, "progress %d %d\n", ++step, steps);
                    fflush(stderr);
                }
            }
            if (o.progress && rank == 0)
                write_finished(&o, names, ranks, w.element_size, &r, c, d);
        }

    if (rank == 0) write_results(&o, names, ranks, w.element_size, &r);
    int all_correct = 1;
    for (int s = 0; s < r.series; s++) all_correct &= r.correct[s];
    for (int a = 0; a < o.algorithm_count; a++) {
        if (contenders[a].papcoll) papcoll_comm_free(&contenders[a].papcoll);
        native_algorithm_close(&contenders[a].native);
    }
    free(w.send);
    free(w.receive);
    free(w.expected);
    free(w.all_elapsed);
    free(w.predicted_arrivals);
    free(w.clock_offsets);
    free(r.ebars);
    free(r.correct);
    free(r.predicted_calls);
    free(r.late_rank_predicted);
    free(r.tallies);
    free(r.arrivals);
    free(r.own_before);
    free(r.own_after);
    free(r.rank_sums);
    free(o.group_colors);
    MPI_Finalize();
    return all_correct ? 0 : 1;
}
