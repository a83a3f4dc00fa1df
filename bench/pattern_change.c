/* pattern_change.c - papcoll-pattern-change: how fast `auto` recovers when the arrival
 * pattern changes (auto's "Learns fast"). papcoll-bench keeps one pattern per series, so
 * it cannot show what auto does in the calls right after a change; this program changes the
 * pattern mid-run and records every call.
 *
 * Four phases of --calls-per-phase calls each, with delay D (--delay-ms):
 *   A  rank 1 late by D;
 *   B  rank 2 late by D              (the late rank moves);
 *   C  nobody late                   (lateness stops);
 *   D  rank 1 late by D again        (lateness returns).
 * Each call is papcoll-bench's one-late iteration: two barriers, the compute phase of
 * --compute-ms cut in two halves with papcoll_edge(0.5) between them (the late rank adds D / 2
 * to each half), then the timed all-reduce (float sum of --bytes per rank). --edge 0 leaves
 * out compute_begin and edge, as an unmodified program would, so auto learns from history.
 *
 * Contenders (--contenders, default auto,native,straggler) are interleaved call by call
 * (A B C, then B C A, C A B: the first after the barriers pays for it), each on its own
 * communicator: papcoll's by name on a papcoll communicator of
 * their own, "native" as MPI_Allreduce on a duplicate of MPI_COMM_WORLD. So every contender
 * meets the same sequence of patterns, and auto's history holds only its own calls.
 *
 * Per call and contender the JSON row holds e-bar (mean over ranks of the time from that
 * rank's arrival to its exit), e-bar_lo (mean over ranks of a_last - a_i plus delta, one
 * point-to-point transfer of the vector measured once at the start; arrivals put on rank 0's
 * clock by the library's clock offsets, as papcoll-bench does) and, for auto, the algorithm
 * papcoll_last_choice named; last_rank, the rank that arrived last, shows the pattern that
 * happened. Times are kept on each rank and gathered once at the end, so no collective of
 * the measurement falls between the timed calls but the barriers.
 *
 * Every call's result is checked against MPI_Allreduce of the same data (computed once: the
 * data does not change) and the receive buffer is spoilt before each call, so a contender
 * that writes a wrong result, or none, stops the run with a message naming it.
 *
 * Output: rank 0 writes one JSON object (settings, phases, rows) to --json FILE or stdout.
 * bench/auto_learning.py runs it and turns the rows into calls-to-recover.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_data.h"
#include "bench_timing.h"
#include "clock_offsets.h"
#include "common/element_values.h"
#include "common/json.h"
#include "common/sleep.h"
#include "common/usage.h"
#include "element_types.h"
#include "papcoll.h"

enum { CLOCK_TAG = 9, MAX_CONTENDERS = 8, PHASE_COUNT = 4 };

/* One phase: which rank comes late (-1: none). */
typedef struct phase {
    const char *name;
    int late_rank;
    const char *what;
} phase;

static const phase phases[PHASE_COUNT] = {
    {"A", 1, "rank 1 late"},
    {"B", 2, "rank 2 late (the late rank moves)"},
    {"C", -1, "nobody late (lateness stops)"},
    {"D", 1, "rank 1 late again (lateness returns)"},
};

static const char usage[] =
    "usage: papcoll-pattern-change [--calls-per-phase 24] [--delay-ms 10] [--bytes 1048576]\n"
    "       [--compute-ms 2] [--contenders auto,native,straggler] [--edge 1|0] [--seed S]\n"
    "       [--json FILE|-]\n"
    "Phases: A rank 1 late, B rank 2 late, C nobody late, D rank 1 late; needs 3 or more "
    "ranks.\n";

typedef struct settings {
    int calls_per_phase;
    double delay_ms, compute_ms;
    int64_t bytes;
    int edge;
    unsigned seed;
    const char *json_path;
    char *contender_names[MAX_CONTENDERS];
    int contender_count;
} settings;

/* One contender: papcoll's (papcoll != NULL) or MPI_Allreduce on `native`. */
typedef struct contender {
    const char *name;
    papcoll_comm *papcoll;
    MPI_Comm native;
} contender;

static int rank, ranks;

static void out_of_memory(const char *what) {
    fprintf(stderr, "papcoll-pattern-change: rank %d: out of memory for %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

/* ---- the command line ----------------------------------------------------------------- */

static double parse_number(const char *text, double minimum, double maximum, const char *what) {
    char *end;
    double value = strtod(text, &end);
    if (end == text || *end != '\0' || !(value >= minimum) || value > maximum)
        usage_error(what, text);
    return value;
}

/* A count: parse_number, and no fraction. */
static int64_t parse_whole(const char *text, double minimum, double maximum, const char *what) {
    double value = parse_number(text, minimum, maximum, what);
    if (value != floor(value)) usage_error(what, text);
    return (int64_t)value;
}

static void parse_settings(int argc, char **argv, settings *s) {
    static char default_contenders[] = "auto,native,straggler";
    usage_init("papcoll-pattern-change", usage);
    *s = (settings){.calls_per_phase = 24, .delay_ms = 10, .compute_ms = 2, .bytes = 1 << 20,
                    .edge = 1, .seed = 1, .json_path = "-"};
    char *contenders = default_contenders;
    for (int i = 1; i < argc; i++) {
        const char *flag = argv[i];
        if (strcmp(flag, "--help") == 0 || strcmp(flag, "-h") == 0) usage_error(NULL, NULL);
        if (i + 1 >= argc) usage_error("%s needs a value", flag);
        char *value = argv[++i];
        if (strcmp(flag, "--calls-per-phase") == 0)
            s->calls_per_phase = (int)parse_whole(
                value, 1, 100000, "bad --calls-per-phase '%s': want a whole number >= 1");
        else if (strcmp(flag, "--delay-ms") == 0)
            s->delay_ms = parse_number(value, 0, 60000, "bad --delay-ms '%s': want [0, 60000]");
        else if (strcmp(flag, "--compute-ms") == 0)
            s->compute_ms = parse_number(value, 0, 60000,
                                         "bad --compute-ms '%s': want [0, 60000]");
        else if (strcmp(flag, "--bytes") == 0)
            s->bytes = parse_whole(value, 1, (double)INT32_MAX,
                                             "bad --bytes '%s': want a whole number >= 1");
        else if (strcmp(flag, "--edge") == 0)
            s->edge = (int)parse_whole(value, 0, 1, "bad --edge '%s': want 1 or 0");
        else if (strcmp(flag, "--seed") == 0)
            s->seed = (unsigned)parse_whole(value, 0, 1e9, "bad --seed '%s'");
        else if (strcmp(flag, "--contenders") == 0)
            contenders = value;
        else if (strcmp(flag, "--json") == 0)
            s->json_path = value;
        else
            usage_error("unknown option '%s'", flag);
    }
    int has_auto = 0;
    for (char *item = strtok(contenders, ","); item; item = strtok(NULL, ",")) {
        if (s->contender_count == MAX_CONTENDERS) usage_error("more than 8 contenders%s", "");
        s->contender_names[s->contender_count++] = item;
        has_auto |= strcmp(item, "auto") == 0;
    }
    if (!has_auto) usage_error("--contenders must include %s, which this program measures", "auto");
    if (ranks < 3) usage_error("the late rank moves from rank 1 to rank 2: run on 3 or more "
                               "ranks%s", "");
}

/* ---- the contenders ------------------------------------------------------------------- */

static void open_contender(const char *name, contender *c) {
    *c = (contender){.name = name, .native = MPI_COMM_NULL};
    if (strcmp(name, "native") == 0) {
        MPI_Comm_dup(MPI_COMM_WORLD, &c->native);
        return;
    }
    papcoll_config config;
    papcoll_config_init(&config);
    config.algorithm = name;
    int code = papcoll_comm_create(MPI_COMM_WORLD, &config, &c->papcoll);
    if (code != MPI_SUCCESS) usage_error("%s", papcoll_error_string(code));
}

static void close_contender(contender *c) {
    if (c->papcoll) papcoll_comm_free(&c->papcoll);
    if (c->native != MPI_COMM_NULL) MPI_Comm_free(&c->native);
}

/* ---- the run -------------------------------------------------------------------------- */

/* The run's data and what every call leaves behind on this rank. */
typedef struct run {
    const settings *s;
    contender contenders[MAX_CONTENDERS];
    element_type type;
    int count;
    char *send, *receive, *expected;
    double *times;                 /* per call: (elapsed, start) on this rank's clock */
    char (*choices)[64];           /* per call: what auto ran ("" for other contenders) */
} run;

static size_t call_index(const run *r, int phase_index, int call, int c) {
    return ((size_t)phase_index * (size_t)r->s->calls_per_phase + (size_t)call) *
               (size_t)r->s->contender_count + (size_t)c;
}

static _Noreturn void stop(const run *r, int phase_index, int call, int c, const char *why) {
    fprintf(stderr, "papcoll-pattern-change: rank %d: %s in phase %s, call %d: %s\n", rank,
            r->contenders[c].name, phases[phase_index].name, call, why);
    MPI_Abort(MPI_COMM_WORLD, 4);
    exit(4); /* MPI_Abort does not return; this tells the compiler so */
}

/* One timed call of contender c: papcoll-bench's one-late iteration with this phase's late
 * rank. */
static void time_call(run *r, int phase_index, int call, int c) {
    const settings *s = r->s;
    contender *runner = &r->contenders[c];
    double half = s->compute_ms / 2;
    if (rank == phases[phase_index].late_rank) half += s->delay_ms / 2;
    size_t bytes = (size_t)r->count * sizeof(float);
    memset(r->receive, 0xFF, bytes); /* NaNs: a call that writes nothing fails the check */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (runner->papcoll && s->edge) papcoll_compute_begin(runner->papcoll);
    sleep_ms(half);
    if (runner->papcoll && s->edge) papcoll_edge(runner->papcoll, 0.5);
    sleep_ms(half);
    double start = MPI_Wtime();
    int code = runner->papcoll
                   ? papcoll_allreduce(runner->papcoll, r->send, r->receive, r->count,
                                       MPI_FLOAT, MPI_SUM)
                   : MPI_Allreduce(r->send, r->receive, r->count, MPI_FLOAT, MPI_SUM,
                                   runner->native);
    double end = MPI_Wtime();
    if (code != MPI_SUCCESS)
        stop(r, phase_index, call, c,
             runner->papcoll ? papcoll_error_string(code) : "MPI_Allreduce failed");
    if (!same_result(r->receive, r->expected, r->count, &r->type, sizeof(float), OP_SUM, ranks))
        stop(r, phase_index, call, c, "the result differs from MPI_Allreduce's");
    size_t index = call_index(r, phase_index, call, c);
    r->times[2 * index] = end - start;
    r->times[2 * index + 1] = start;
    r->choices[index][0] = '\0';
    if (runner->papcoll && strcmp(runner->name, "auto") == 0) {
        papcoll_choice choice;
        papcoll_last_choice(runner->papcoll, &choice);
        snprintf(r->choices[index], sizeof r->choices[index], "%s", choice.algorithm);
    }
}

/* ---- the JSON (rank 0) ---------------------------------------------------------------- */

static void write_settings(FILE *out, const run *r, double delta_ms) {
    const settings *s = r->s;
    fprintf(out, "{\"program\": \"papcoll-pattern-change\", \"ranks\": %d, \"bytes\": %lld, "
                 "\"count\": %d, \"datatype\": \"float\", \"op\": \"sum\", \"delay_ms\": %.6g, "
                 "\"compute_ms\": %.6g, \"calls_per_phase\": %d, \"edge\": %s, \"seed\": %u, "
                 "\"delta_ms\": %.6f,\n \"contenders\": [",
            ranks, (long long)s->bytes, r->count, s->delay_ms, s->compute_ms, s->calls_per_phase,
            s->edge ? "true" : "false", s->seed, delta_ms);
    for (int c = 0; c < s->contender_count; c++) {
        if (c) fputs(", ", out);
        json_write_string(out, s->contender_names[c]);
    }
    fputs("],\n \"phases\": [", out);
    for (int p = 0; p < PHASE_COUNT; p++) {
        fprintf(out, "%s{\"phase\": \"%s\", \"late_rank\": ", p ? ", " : "", phases[p].name);
        if (phases[p].late_rank < 0) fputs("null", out);
        else fprintf(out, "%d", phases[p].late_rank);
        fputs(", \"what\": ", out);
        json_write_string(out, phases[p].what);
        fputs("}", out);
    }
}

/* all_times: every rank's times, rank after rank (MPI_Gather); offsets: every rank's clock
 * offset to rank 0's. */
static void write_json(FILE *out, const run *r, const double *all_times, const double *offsets,
                       double delta_ms) {
    const settings *s = r->s;
    size_t calls = call_index(r, PHASE_COUNT, 0, 0);
    double *arrivals_ms = malloc((size_t)ranks * sizeof *arrivals_ms);
    if (arrivals_ms == NULL) out_of_memory("the arrivals");
    write_settings(out, r, delta_ms);
    fputs("],\n \"rows\": [\n", out);
    for (int p = 0; p < PHASE_COUNT; p++)
        for (int call = 0; call < s->calls_per_phase; call++)
            for (int c = 0; c < s->contender_count; c++) {
                size_t index = call_index(r, p, call, c);
                double ebar_ms = 0;
                int last_rank = 0;
                for (int k = 0; k < ranks; k++) {
                    const double *mine = all_times + 2 * ((size_t)k * calls + index);
                    ebar_ms += mine[0] * 1e3 / ranks;
                    arrivals_ms[k] = (mine[1] + offsets[k]) * 1e3;
                    if (arrivals_ms[k] > arrivals_ms[last_rank]) last_rank = k;
                }
                fprintf(out, "  {\"phase\": \"%s\", \"call_in_phase\": %d, \"last_rank\": %d, "
                             "\"contender\": ", phases[p].name, call, last_rank);
                json_write_string(out, r->contenders[c].name);
                fprintf(out, ", \"ebar_ms\": %.6f, \"ebar_lo_ms\": %.6f, \"chose\": ", ebar_ms,
                        lower_bound_ms(arrivals_ms, ranks, delta_ms));
                if (r->choices[index][0]) json_write_string(out, r->choices[index]);
                else fputs("null", out);
                fputs(index + 1 < calls ? "},\n" : "}\n", out);
            }
    fputs(" ]}\n", out);
    free(arrivals_ms);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    settings s;
    parse_settings(argc, argv, &s);
    run r = {.s = &s};
    find_element_type("float", &r.type);
    r.count = (int)(s.bytes / (int64_t)sizeof(float));
    if (r.count < 1) r.count = 1;
    /* Errors come back as codes (the duplicates made below inherit this), so a failing
     * contender is named before the run stops. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int c = 0; c < s.contender_count; c++) open_contender(s.contender_names[c],
                                                               &r.contenders[c]);

    size_t bytes = (size_t)r.count * sizeof(float), calls = call_index(&r, PHASE_COUNT, 0, 0);
    r.send = malloc(bytes);
    r.receive = malloc(bytes);
    r.expected = malloc(bytes);
    r.times = malloc(2 * calls * sizeof *r.times);
    r.choices = malloc(calls * sizeof *r.choices);
    double *offsets = malloc((size_t)ranks * sizeof *offsets);
    double *all_times = rank == 0 ? malloc(2 * calls * (size_t)ranks * sizeof *all_times) : NULL;
    if (!r.send || !r.receive || !r.expected || !r.times || !r.choices || !offsets ||
        (rank == 0 && !all_times))
        out_of_memory("the vectors and times");

    double own_offset;
    clock_offsets_measure(MPI_COMM_WORLD, CLOCK_TAG, &own_offset, offsets, NULL);
    /* delta before the data: the ping-pong overwrites rank 1's buffer */
    double delta_ms = point_to_point_ms(r.receive, r.count, MPI_FLOAT);
    uint64_t state = 0x9E3779B97F4A7C15ULL ^ ((uint64_t)s.seed << 40) ^ ((uint64_t)rank << 20);
    next_random(&state);
    fill_random(r.send, r.count, &r.type, sizeof(float), OP_SUM, rank, ranks, &state);
    MPI_Allreduce(r.send, r.expected, r.count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);

    /* the contenders' order turns by one every call: the first after the barriers was
     * measured slower than the others (papcoll-bench found it, docs/benchmarks.md) */
    for (int p = 0, turn = 0; p < PHASE_COUNT; p++)
        for (int call = 0; call < s.calls_per_phase; call++, turn++)
            for (int k = 0; k < s.contender_count; k++)
                time_call(&r, p, call, (k + turn) % s.contender_count);

    MPI_Gather(r.times, (int)(2 * calls), MPI_DOUBLE, all_times, (int)(2 * calls), MPI_DOUBLE, 0,
               MPI_COMM_WORLD);
    if (rank == 0) {
        FILE *out = strcmp(s.json_path, "-") == 0 ? stdout : fopen(s.json_path, "w");
        if (out == NULL) {
            fprintf(stderr, "papcoll-pattern-change: cannot write %s\n", s.json_path);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        write_json(out, &r, all_times, offsets, delta_ms);
        if (out != stdout) fclose(out);
    }
    for (int c = 0; c < s.contender_count; c++) close_contender(&r.contenders[c]);
    free(r.send);
    free(r.receive);
    free(r.expected);
    free(r.times);
    free(r.choices);
    free(offsets);
    free(all_times);
    MPI_Finalize();
    return 0;
}
