/* papcoll_bench.c - the mini-benchmark of seed 000 (Proficz 2018, Sect. 5.1, Fig. 9): the
 * average elapsed time e-bar of an all-reduce when the processes arrive at it at different
 * times.
 *
 * One iteration, for each algorithm in turn (algorithms are interleaved iteration by
 * iteration, so slow drifts of the machine hit all of them alike):
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
 * e-bar_lo, the lower bound (seed 000 S3), is computed per iteration from the arrivals
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
 * prints "progress DONE TOTAL" lines on stderr, which `papcoll bench` turns into a bar.
 */
#define _POSIX_C_SOURCE 200809L
#include <complex.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "element_types.h"
#include "native_algorithms.h"
#include "papcoll.h"

#define MAX_ITEMS 32

typedef struct options {
    char *algorithm_names[MAX_ITEMS];
    int algorithm_count;
    int64_t counts[MAX_ITEMS];
    int count_count;
    double max_delays_ms[MAX_ITEMS];
    int max_delay_count;
    int one_late;              /* else rand-late */
    int mispredict;            /* one-late: every rank predicts rank 2 late, not rank 1 */
    int iterations, warmup;
    double compute_ms;
    unsigned seed;
    const char *datatype_name;
    const char *op_name;
    const char *json_path;     /* NULL: table on stdout */
    int progress;
    const char *schedule;      /* recursive_multiplying's schedule, or NULL */
    int32_t *group_colors;     /* --group-colors: one per rank; NULL: shared-memory groups */
} options;

/* One algorithm under test: papcoll's or the library's. */
typedef struct contender {
    const char *name;
    papcoll_comm *papcoll;     /* NULL for native ones */
    native_algorithm native;
} contender;

/* What `auto` ran in the timed calls of one series (papcoll_last_choice), for the JSON. */
enum { MOST_CHOSEN = 8 };
typedef struct choice_tally {
    char names[MOST_CHOSEN][64];
    int counts[MOST_CHOSEN];
    int distinct;
    double gain_sum;           /* predicted gain: native_seconds / predicted_seconds */
    int calls;
} choice_tally;

static void tally_choice(choice_tally *tally, const papcoll_choice *choice) {
    int k = 0;
    while (k < tally->distinct && strcmp(tally->names[k], choice->algorithm) != 0) k++;
    if (k == tally->distinct && k < MOST_CHOSEN) {
        snprintf(tally->names[k], sizeof tally->names[k], "%s", choice->algorithm);
        tally->distinct++;
    }
    if (k < MOST_CHOSEN) tally->counts[k]++;
    tally->gain_sum += choice->predicted_seconds > 0
                           ? choice->native_seconds / choice->predicted_seconds
                           : 1.0;
    tally->calls++;
}

typedef enum { OP_SUM, OP_PROD, OP_MIN, OP_MAX, OP_BAND, OP_BOR, OP_BXOR } op_code;

static int rank, ranks;

/* Prints the problem (format with value) and the usage, then exits 2; with format NULL
 * (--help) prints only the usage and exits 0. */
static void usage_error(const char *format, const char *value) {
    if (rank == 0) {
        if (format) {
            fprintf(stderr, "papcoll-bench: ");
            fprintf(stderr, format, value);
            fprintf(stderr, "\n");
        }
        fprintf(format ? stderr : stdout,
                "usage: papcoll-bench --algorithms a,b --counts 1M --mode one-late|rand-late\n"
                "       --max-delays-ms 0,10,50 [--iterations 20] [--warmup 2] "
                "[--compute-ms 100]\n"
                "       [--datatype int8..uint64|float|double|long_double|...] "
                "[--op sum|prod|min|max|band|bor|bxor]\n"
                "       [--seed S] [--json FILE|-] [--progress]\n"
                "       [--schedule STRING]   (recursive_multiplying's schedule)\n"
                "       [--group-colors c0,c1,...]   (hierarchical algorithms: every "
                "rank's group, >= 0)\n");
    }
    MPI_Finalize();
    exit(format ? 2 : 0);
}

/* "1048576", "1M", "512K": K, M, G are powers of 1024 (the paper's K and M of floats). */
static int64_t parse_count(const char *text) {
    char *end;
    errno = 0;
    long long value = strtoll(text, &end, 10);
    int64_t scale = 1;
    if (*end == 'K' || *end == 'k') scale = 1 << 10, end++;
    else if (*end == 'M' || *end == 'm') scale = 1 << 20, end++;
    else if (*end == 'G' || *end == 'g') scale = 1 << 30, end++;
    if (errno || end == text || *end != '\0' || value < 0 || value > INT32_MAX / scale)
        usage_error("bad count '%s': want a number of elements, e.g. 1009 or 1M", text);
    return value * scale;
}

static double parse_delay(const char *text) {
    char *end;
    double value = strtod(text, &end);
    if (end == text || *end != '\0' || !(value >= 0) || value > 60000)
        usage_error("bad max delay '%s': want milliseconds in [0, 60000]", text);
    return value;
}

static int split(char *list, char **items) {
    int count = 0;
    for (char *item = strtok(list, ","); item; item = strtok(NULL, ",")) {
        if (count == MAX_ITEMS) usage_error("more than 32 items in '%s'", list);
        items[count++] = item;
    }
    return count;
}

static int parse_int(const char *text, int minimum, const char *what) {
    char *end;
    long value = strtol(text, &end, 10);
    if (end == text || *end != '\0' || value < minimum || value > 1000000) usage_error(what, text);
    return (int)value;
}

/* --group-colors c0,c1,...: one color >= 0 per rank of MPI_COMM_WORLD, in rank order. Not
 * split(): a run may have more ranks than split's 32 items. */
static int32_t *parse_group_colors(const char *text) {
    int32_t *colors = malloc((size_t)ranks * sizeof *colors);
    if (colors == NULL) usage_error("out of memory for --group-colors '%s'", text);
    int given = 0;
    const char *at = text;
    for (;;) {
        char *end;
        errno = 0;
        long value = strtol(at, &end, 10);
        /* a number, >= 0, that fits a color, ended by ',' or the end: nothing else */
        if (*at < '0' || *at > '9' || errno || value > INT32_MAX || (*end != ',' && *end)) {
            char problem[200];
            snprintf(problem, sizeof problem,
                     "bad --group-colors '%.60s': item %d is not a color (a whole number "
                     "from 0 to 2147483647)", text, given + 1);
            free(colors);
            usage_error("%s", problem);
        }
        if (given < ranks) colors[given] = (int32_t)value;
        given++;
        if (*end == '\0') break;
        at = end + 1;
    }
    if (given != ranks) {
        char problem[200];
        snprintf(problem, sizeof problem,
                 "--group-colors gives %d colors for %d ranks: give one per rank, in rank "
                 "order", given, ranks);
        free(colors);
        usage_error("%s", problem);
    }
    return colors;
}

static void parse_options(int argc, char **argv, options *o) {
    static char default_algorithms[] = "ring,native";
    memset(o, 0, sizeof *o);
    o->algorithm_count = split(default_algorithms, o->algorithm_names);
    o->counts[0] = 1 << 20;
    o->count_count = 1;
    o->max_delay_count = 1;
    o->one_late = 1;
    o->iterations = 20;
    o->warmup = 2;
    o->compute_ms = 100;
    o->seed = 1;
    o->datatype_name = "float";
    o->op_name = "sum";
    for (int i = 1; i < argc; i++) {
        const char *flag = argv[i];
        if (strcmp(flag, "--help") == 0 || strcmp(flag, "-h") == 0) usage_error(NULL, NULL);
        if (strcmp(flag, "--progress") == 0) {
            o->progress = 1;
            continue;
        }
        if (i + 1 >= argc) usage_error("%s needs a value", flag);
        char *value = argv[++i];
        if (strcmp(flag, "--algorithms") == 0) {
            o->algorithm_count = split(value, o->algorithm_names);
        } else if (strcmp(flag, "--counts") == 0) {
            char *items[MAX_ITEMS];
            o->count_count = split(value, items);
            for (int c = 0; c < o->count_count; c++) o->counts[c] = parse_count(items[c]);
        } else if (strcmp(flag, "--max-delays-ms") == 0) {
            char *items[MAX_ITEMS];
            o->max_delay_count = split(value, items);
            for (int d = 0; d < o->max_delay_count; d++) o->max_delays_ms[d] = parse_delay(items[d]);
        } else if (strcmp(flag, "--mode") == 0) {
            if (strcmp(value, "one-late") != 0 && strcmp(value, "rand-late") != 0)
                usage_error("bad mode '%s': want one-late or rand-late", value);
            o->one_late = strcmp(value, "one-late") == 0;
        } else if (strcmp(flag, "--iterations") == 0) {
            o->iterations = parse_int(value, 1, "bad --iterations '%s': want 1 or more");
        } else if (strcmp(flag, "--warmup") == 0) {
            o->warmup = parse_int(value, 0, "bad --warmup '%s': want 0 or more");
        } else if (strcmp(flag, "--compute-ms") == 0) {
            o->compute_ms = parse_delay(value);
        } else if (strcmp(flag, "--mispredict") == 0) {
            o->mispredict = parse_int(value, 0, "bad --mispredict '%s': want 0 or 1") != 0;
        } else if (strcmp(flag, "--seed") == 0) {
            o->seed = (unsigned)parse_int(value, 0, "bad --seed '%s'");
        } else if (strcmp(flag, "--datatype") == 0) {
            o->datatype_name = value; /* checked in main, where the MPI's handles exist */
        } else if (strcmp(flag, "--op") == 0) {
            o->op_name = value;
        } else if (strcmp(flag, "--schedule") == 0) {
            o->schedule = value;
        } else if (strcmp(flag, "--group-colors") == 0) {
            free(o->group_colors);
            o->group_colors = parse_group_colors(value);
        } else if (strcmp(flag, "--json") == 0) {
            o->json_path = value;
        } else {
            usage_error("unknown option '%s'", flag);
        }
    }
    if (o->one_late && ranks < 2) usage_error("one-late delays rank 1, so it needs 2 or more ranks%s", "");
    if (o->mispredict && (!o->one_late || ranks < 3))
        usage_error("--mispredict predicts rank 2 late instead of rank 1: it needs one-late "
                    "and 3 or more ranks%s", "");
}

/* ---- the emulated application ------------------------------------------------------- */

/* Where the PAP monitor learns that `progress` of the compute phase is done (seed 000,
 * Sect. 3): papcoll's slt and prr get their arrival predictions from it. */
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

/* delta of seed 000 S3: one point-to-point transfer of the whole vector, rank 0 -> 1
 * (median of 9 half round trips), broadcast to every rank. */
static double point_to_point_ms(void *buffer, int count, MPI_Datatype datatype) {
    double halves[9] = {0};
    for (int round = 0; round < 9 && ranks > 1; round++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double start = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(buffer, count, datatype, 1, 7, MPI_COMM_WORLD);
            MPI_Recv(buffer, count, datatype, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buffer, count, datatype, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buffer, count, datatype, 0, 7, MPI_COMM_WORLD);
        }
        halves[round] = (MPI_Wtime() - start) / 2 * 1e3;
    }
    for (int i = 1; i < 9; i++) /* insertion sort of 9 values */
        for (int j = i; j > 0 && halves[j] < halves[j - 1]; j--) {
            double swap = halves[j];
            halves[j] = halves[j - 1];
            halves[j - 1] = swap;
        }
    double median = halves[4];
    MPI_Bcast(&median, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return median;
}

/* Rank 0 only: offsets[r] = rank 0's clock less rank r's, from the ping-pong of 8 with the
 * shortest round trip (the reply's time taken halfway through it); others pass NULL. */
static void measure_clock_offsets(double *offsets) {
    if (rank == 0) offsets[0] = 0;
    for (int peer = 1; peer < ranks; peer++) {
        double best_round_trip = INFINITY, remote = 0;
        for (int round = 0; round < 8; round++) {
            if (rank == 0) {
                double sent = MPI_Wtime();
                MPI_Send(&sent, 1, MPI_DOUBLE, peer, 8, MPI_COMM_WORLD);
                MPI_Recv(&remote, 1, MPI_DOUBLE, peer, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                double received = MPI_Wtime();
                if (received - sent < best_round_trip) {
                    best_round_trip = received - sent;
                    offsets[peer] = (sent + received) / 2 - remote;
                }
            } else if (rank == peer) {
                MPI_Recv(&remote, 1, MPI_DOUBLE, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                double now = MPI_Wtime();
                MPI_Send(&now, 1, MPI_DOUBLE, 0, 8, MPI_COMM_WORLD);
            }
        }
    }
}

static void sleep_ms(double milliseconds) {
    if (milliseconds <= 0) return;
    struct timespec duration = {(time_t)(milliseconds / 1000),
                                (long)(fmod(milliseconds, 1000.0) * 1e6)};
    while (nanosleep(&duration, &duration) != 0 && errno == EINTR) {
    }
}

/* xorshift64*: a seeded generator of our own, so every MPI and libc gives the same data. */
static uint64_t next_random(uint64_t *state) {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * 2685821657736338717ULL;
}

static double uniform(uint64_t *state) { return (double)(next_random(state) >> 11) / 9007199254740992.0; }

/* ---- element types and ops ------------------------------------------------------- */


static const char *const op_names[] = {"sum", "prod", "min", "max", "band", "bor", "bxor"};

static op_code parse_op(const char *name, element_kind kind) {
    for (int i = 0; i < (int)(sizeof op_names / sizeof op_names[0]); i++) {
        if (strcmp(name, op_names[i]) != 0) continue;
        /* MPI defines the bitwise ops on integers only, min and max not on complex */
        if (i >= OP_BAND && (kind == KIND_REAL || kind == KIND_COMPLEX))
            usage_error("--op %s applies to integer types only", name);
        if ((i == OP_MIN || i == OP_MAX) && kind == KIND_COMPLEX)
            usage_error("--op %s is not defined on complex types", name);
        return (op_code)i;
    }
    usage_error("bad op '%s': want sum, prod, min, max, band, bor or bxor", name);
    return OP_SUM;
}

static MPI_Op mpi_op(op_code op) {
    switch (op) {
    case OP_PROD: return MPI_PROD;
    case OP_MIN: return MPI_MIN;
    case OP_MAX: return MPI_MAX;
    case OP_BAND: return MPI_BAND;
    case OP_BOR: return MPI_BOR;
    case OP_BXOR: return MPI_BXOR;
    default: return MPI_SUM;
    }
}

/* Integers of 1, 2, 4 or 8 bytes, through memcpy so no type is punned. */
static void store_integer(void *at, size_t size, uint64_t bits) {
    uint8_t b8 = (uint8_t)bits;
    uint16_t b16 = (uint16_t)bits;
    uint32_t b32 = (uint32_t)bits;
    const void *from = size == 1 ? (const void *)&b8 : size == 2 ? (const void *)&b16
                       : size == 4 ? (const void *)&b32 : (const void *)&bits;
    memcpy(at, from, size);
}

/* Floating-point components: float, double or long double by size (long double can be as
 * small as double, so the test is in that order). */
static void store_real(void *at, size_t size, long double value) {
    if (size == sizeof(float)) {
        float x = (float)value;
        memcpy(at, &x, sizeof x);
    } else if (size == sizeof(double)) {
        double x = (double)value;
        memcpy(at, &x, sizeof x);
    } else {
        memcpy(at, &value, sizeof value);
    }
}

static long double load_real(const void *at, size_t size) {
    if (size == sizeof(float)) {
        float x;
        memcpy(&x, at, sizeof x);
        return x;
    }
    if (size == sizeof(double)) {
        double x;
        memcpy(&x, at, sizeof x);
        return x;
    }
    long double x;
    memcpy(&x, at, sizeof x);
    return x;
}

static long double epsilon_of(size_t size) {
    return size == sizeof(float) ? FLT_EPSILON : size == sizeof(double) ? DBL_EPSILON : LDBL_EPSILON;
}

/* Random data whose reduction stays inside the type, so every order of evaluation gives the
 * same integers and near-same floating-point values (signed overflow is undefined in C):
 *   sum: integers in +-max/P (unsigned 0..max/P), reals in [-1, 1);
 *   prod: rank 0 any value of the type (reals [0.5, 2) with a sign), the others +-1 (unsigned
 *         1), reals [0.5, 2) with a sign (complex: that modulus at a random angle);
 *   min, max, bitwise: any bit pattern of an integer, reals in [-1, 1). */
static void fill_random(void *data, int64_t count, const element_type *type, size_t size,
                        op_code op, uint64_t *state) {
    char *bytes = data;
    int bits = (int)(size * 8);
    uint64_t unsigned_max = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    uint64_t signed_max = unsigned_max >> 1;
    for (int64_t i = 0; i < count; i++) {
        char *at = bytes + (size_t)i * size;
        uint64_t random = next_random(state);
        if (type->kind == KIND_SIGNED || type->kind == KIND_UNSIGNED) {
            int is_signed = type->kind == KIND_SIGNED;
            uint64_t top = is_signed ? signed_max : unsigned_max, bits_value = random;
            if (op == OP_SUM || (op == OP_PROD && rank == 0)) {
                uint64_t magnitude = op == OP_SUM ? top / (uint64_t)ranks : top;
                uint64_t value = magnitude == UINT64_MAX ? random : random % (magnitude + 1);
                /* two's complement negation in unsigned arithmetic, stored by its bits */
                bits_value = is_signed && (next_random(state) & 1) ? ~value + 1 : value;
            } else if (op == OP_PROD) {
                bits_value = is_signed && (random & 1) ? UINT64_MAX : 1; /* -1 or 1 */
            }
            store_integer(at, size, bits_value);
            continue;
        }
        size_t part = type->kind == KIND_COMPLEX ? size / 2 : size;
        long double value = 2 * uniform(state) - 1;
        /* A product of P factors: each within 1 +- 1/P, so P of them stay within e^+-1 and
         * neither overflow nor underflow even in float at P = 4096 (factors in [0.5, 2)
         * would drift as 2^(0.55 sqrt(P))). */
        if (op == OP_PROD)
            value = (value < 0 ? -1 : 1) * (1 + (2 * uniform(state) - 1) / ranks);
        if (type->kind == KIND_REAL) {
            store_real(at, part, value);
        } else if (op == OP_PROD) {
            double angle = 6.283185307179586 * uniform(state);
            store_real(at, part, fabsl(value) * cos(angle));
            store_real(at + part, part, fabsl(value) * sin(angle));
        } else {
            store_real(at, part, value);
            store_real(at + part, part, 2 * uniform(state) - 1);
        }
    }
}

/* Integers, and min/max of reals, must match MPI_Allreduce bit for bit (they do not depend
 * on the order of evaluation). Floating-point sums must lie within 4 P^2 eps (absolute) of
 * MPI's, which bounds any two summation orders of P values in [-1, 1]; products within
 * 8 P eps relative to MPI's (P roundings of factors in [0.5, 2), complex ones a few each). */
static int same_result(const void *result, const void *expected, int64_t count,
                       const element_type *type, size_t size, op_code op) {
    if (type->kind == KIND_SIGNED || type->kind == KIND_UNSIGNED)
        return memcmp(result, expected, (size_t)count * size) == 0;
    size_t part = type->kind == KIND_COMPLEX ? size / 2 : size;
    int parts = type->kind == KIND_COMPLEX ? 2 : 1;
    long double epsilon = epsilon_of(part);
    const char *got = result, *want = expected;
    for (int64_t i = 0; i < count; i++) {
        long double a[2] = {0, 0}, b[2] = {0, 0};
        for (int k = 0; k < parts; k++) {
            a[k] = load_real(got + (size_t)i * size + (size_t)k * part, part);
            b[k] = load_real(want + (size_t)i * size + (size_t)k * part, part);
        }
        long double tolerance = op == OP_SUM ? 4.0L * ranks * ranks * epsilon
                                : op == OP_PROD ? 8.0L * ranks * epsilon * hypotl(b[0], b[1])
                                                : 0;
        for (int k = 0; k < parts; k++)
            if (!(fabsl(a[k] - b[k]) <= tolerance)) return 0;
    }
    return 1;
}

/* ---- statistics -------------------------------------------------------------------- */

typedef struct statistics {
    double mean, standard_deviation, median, minimum, maximum;
} statistics;

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static statistics summarize(double *values, int n) {
    statistics s = {0, 0, 0, 0, 0};
    for (int i = 0; i < n; i++) s.mean += values[i] / n;
    for (int i = 0; i < n; i++) s.standard_deviation += (values[i] - s.mean) * (values[i] - s.mean);
    s.standard_deviation = n > 1 ? sqrt(s.standard_deviation / (n - 1)) : 0;
    qsort(values, (size_t)n, sizeof *values, compare_doubles);
    s.median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    s.minimum = values[0];
    s.maximum = values[n - 1];
    return s;
}

/* ---- main -------------------------------------------------------------------------- */

static void open_contender(const char *name, const options *o, contender *c) {
    memset(c, 0, sizeof *c);
    c->name = name;
    c->native.comm = MPI_COMM_NULL;
    char message[2600];
    if (strcmp(name, "native") == 0 || strncmp(name, "native:", 7) == 0) {
        if (!native_algorithm_open(name[6] ? name + 7 : "", MPI_COMM_WORLD, &c->native, message,
                                   sizeof message))
            usage_error("%s", message);
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
    if (code != MPI_SUCCESS) usage_error("%s", papcoll_error_string(code));
}

static int run_allreduce(contender *c, const void *send, void *receive, int count,
                         MPI_Datatype datatype, MPI_Op op) {
    if (c->papcoll) return papcoll_allreduce(c->papcoll, send, receive, count, datatype, op);
    native_algorithm_select(&c->native);
    int code = MPI_Allreduce(send, receive, count, datatype, op, c->native.comm);
    native_algorithm_restore(&c->native);
    return code;
}

/* e-bar_lo (seed 000 S3) of one call, from the arrivals that actually happened: no rank can
 * finish before the last one has arrived and one transfer delta has followed, so
 * e-bar >= mean over ranks of (a_last - a_i) + delta. Computed per iteration from the
 * recorded arrivals (sleeps overshoot, ranks are descheduled, rand-late's delays are
 * random) and averaged like e-bar; the intended arrivals would give rand-late only delta. */
static double lower_bound_ms(const double *arrivals_ms, double p2p_ms) {
    double last = -INFINITY, waiting = 0;
    for (int r = 0; r < ranks; r++) last = fmax(last, arrivals_ms[r]);
    for (int r = 0; r < ranks; r++) waiting += (last - arrivals_ms[r]) / ranks;
    return waiting + p2p_ms;
}

static void print_json_string(FILE *out, const char *text) {
    fputc('"', out);
    for (; *text; text++) {
        if (*text == '"' || *text == '\\') fputc('\\', out);
        fputc(*text, out);
    }
    fputc('"', out);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    options o;
    parse_options(argc, argv, &o);
    element_type type;
    if (!find_element_type(o.datatype_name, &type))
        usage_error("bad datatype '%s' (or one this MPI lacks): want int8..uint64, "
                    "signed_char..unsigned_long_long, float, double, long_double, "
                    "c_float_complex or c_double_complex", o.datatype_name);
    MPI_Datatype datatype = type.datatype;
    op_code op = parse_op(o.op_name, type.kind);
    int element_size;
    MPI_Type_size(datatype, &element_size);

    /* Errors come back as codes (and the duplicates made below inherit this), so a failing
     * algorithm is reported by name before the run stops. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    contender contenders[MAX_ITEMS];
    for (int a = 0; a < o.algorithm_count; a++)
        open_contender(o.algorithm_names[a], &o, &contenders[a]);

    int64_t largest = 1;
    for (int c = 0; c < o.count_count; c++) largest = o.counts[c] > largest ? o.counts[c] : largest;
    char *send = malloc((size_t)largest * (size_t)element_size);
    char *receive = malloc((size_t)largest * (size_t)element_size);
    char *expected = malloc((size_t)largest * (size_t)element_size);
    /* (elapsed, t0) of every rank: one Allgather a call, as before */
    double *all_elapsed = malloc(2 * (size_t)ranks * sizeof *all_elapsed);
    double *ebar = malloc((size_t)o.iterations * sizeof *ebar);
    int series = o.algorithm_count * o.count_count * o.max_delay_count;
    double *ebars = malloc((size_t)series * (size_t)o.iterations * sizeof *ebars);
    int *correct = malloc((size_t)series * sizeof *correct);
    /* slt, prr: in how many timed calls every rank had a usable prediction */
    int *predicted_calls = calloc((size_t)series, sizeof *predicted_calls);
    choice_tally *tallies = calloc((size_t)series, sizeof *tallies);
    /* every rank's arrival in every timed call, kept by rank 0, which writes the JSON */
    double *arrivals = rank == 0 ? malloc((size_t)series * (size_t)o.iterations * (size_t)ranks *
                                          sizeof *arrivals)
                                 : NULL;
    if (!send || !receive || !expected || !all_elapsed || !ebar || !ebars || !correct ||
        (rank == 0 && !arrivals)) {
        fprintf(stderr, "papcoll-bench: out of memory for %lld elements\n", (long long)largest);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    for (int s = 0; s < series; s++) correct[s] = 1;

    double *clock_offsets = rank == 0 ? malloc((size_t)ranks * sizeof *clock_offsets) : NULL;
    if (rank == 0 && !clock_offsets) {
        fprintf(stderr, "papcoll-bench: out of memory for %d clock offsets\n", ranks);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    measure_clock_offsets(clock_offsets);

    double p2p_ms[MAX_ITEMS];
    for (int c = 0; c < o.count_count; c++)
        p2p_ms[c] = point_to_point_ms(send, (int)o.counts[c], datatype);

    int steps = o.count_count * o.max_delay_count * (o.warmup + o.iterations), step = 0;
    for (int c = 0; c < o.count_count; c++) {
        int count = (int)o.counts[c];
        for (int d = 0; d < o.max_delay_count; d++) {
            double max_delay = o.max_delays_ms[d];
            for (int iteration = 0; iteration < o.warmup + o.iterations; iteration++) {
                for (int a = 0; a < o.algorithm_count; a++) {
                    int s = (a * o.count_count + c) * o.max_delay_count + d;
                    uint64_t state = 0x9E3779B97F4A7C15ULL ^
                                     ((uint64_t)o.seed << 40) ^ ((uint64_t)rank << 20) ^
                                     (uint64_t)(iteration * MAX_ITEMS + a) * 7919u;
                    next_random(&state);
                    fill_random(send, count, &type, (size_t)element_size, op, &state);
                    /* rand-late's delay: drawn per (rank, iteration), not per algorithm, so
                     * that every algorithm of an iteration meets the same arrivals (before,
                     * the draws differed by algorithm, and so did e-bar_lo: 22 against 35 ms
                     * at P = 4, 100 ms, 10 iterations) */
                    uint64_t delay_state = 0xD1B54A32D192ED03ULL ^ ((uint64_t)o.seed << 40) ^
                                           ((uint64_t)rank << 20) ^
                                           (uint64_t)(iteration * MAX_ITEMS + d) * 104729u;
                    next_random(&delay_state);
                    double half = (max_delay + o.compute_ms) / 2;
                    if (o.one_late && rank == 1) half += max_delay / 2;
                    if (!o.one_late) half += uniform(&delay_state) * max_delay / 2;
                    MPI_Barrier(MPI_COMM_WORLD);
                    MPI_Barrier(MPI_COMM_WORLD);
                    if (contenders[a].papcoll) papcoll_compute_begin(contenders[a].papcoll);
                    sleep_ms(half);
                    if (o.mispredict)
                        mispredict(&contenders[a], o.compute_ms, max_delay);
                    else
                        edge(&contenders[a], 0.5);
                    sleep_ms(half);
                    double start = MPI_Wtime();
                    int code = run_allreduce(&contenders[a], send, receive, count, datatype, mpi_op(op));
                    double elapsed = MPI_Wtime() - start;
                    if (code != MPI_SUCCESS) {
                        fprintf(stderr, "papcoll-bench: rank %d: %s failed: %s\n", rank,
                                contenders[a].name,
                                contenders[a].papcoll ? papcoll_error_string(code) : "MPI error");
                        MPI_Abort(MPI_COMM_WORLD, 4);
                    }
                    MPI_Allreduce(send, expected, count, datatype, mpi_op(op), MPI_COMM_WORLD);
                    int ok = same_result(receive, expected, count, &type, (size_t)element_size, op),
                        all_ok;
                    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
                    double mine[2] = {elapsed, start};
                    MPI_Allgather(mine, 2, MPI_DOUBLE, all_elapsed, 2, MPI_DOUBLE, MPI_COMM_WORLD);
                    if (iteration < o.warmup) continue;
                    double mean = 0, earliest = INFINITY;
                    for (int r = 0; r < ranks; r++) {
                        mean += all_elapsed[2 * r] / ranks;
                        if (rank == 0) {
                            all_elapsed[2 * r + 1] += clock_offsets[r];
                            earliest = fmin(earliest, all_elapsed[2 * r + 1]);
                        }
                    }
                    if (rank == 0)
                        for (int r = 0; r < ranks; r++)
                            arrivals[((size_t)s * (size_t)o.iterations +
                                      (size_t)(iteration - o.warmup)) * (size_t)ranks + (size_t)r] =
                                (all_elapsed[2 * r + 1] - earliest) * 1e3;
                    ebars[(size_t)s * (size_t)o.iterations + (size_t)(iteration - o.warmup)] = mean * 1e3;
                    correct[s] &= all_ok;
                    int predicted = 0;
                    if (contenders[a].papcoll)
                        papcoll_last_prediction(contenders[a].papcoll, &predicted, NULL, NULL);
                    predicted_calls[s] += predicted;
                    if (contenders[a].papcoll && strcmp(contenders[a].name, "auto") == 0) {
                        papcoll_choice choice;
                        papcoll_last_choice(contenders[a].papcoll, &choice);
                        tally_choice(&tallies[s], &choice);
                    }
                }
                if (o.progress && rank == 0) {
                    fprintf(stderr, "progress %d %d\n", ++step, steps);
                    fflush(stderr);
                }
            }
        }
    }

    if (rank == 0) {
        char library[256];
        native_library_name(library, sizeof library);
        FILE *out = stdout;
        if (o.json_path && strcmp(o.json_path, "-") != 0) out = fopen(o.json_path, "w");
        if (out == NULL && o.json_path) {
            fprintf(stderr, "papcoll-bench: cannot write %s: %s\n", o.json_path, strerror(errno));
            MPI_Abort(MPI_COMM_WORLD, 5);
        }
        if (o.json_path) fprintf(out, "[\n");
        else fprintf(out, "%-28s %6s %10s %6s %10s %10s %10s %8s\n", "algorithm", "ranks",
                     "bytes", "delay", "ebar_ms", "2sigma_ms", "median_ms", "correct");
        for (int s = 0; s < series; s++) {
            int a = s / (o.count_count * o.max_delay_count);
            int c = (s / o.max_delay_count) % o.count_count, d = s % o.max_delay_count;
            for (int i = 0; i < o.iterations; i++) ebar[i] = ebars[(size_t)s * (size_t)o.iterations + (size_t)i];
            statistics st = summarize(ebar, o.iterations);
            double bound = 0;
            for (int i = 0; i < o.iterations; i++)
                bound += lower_bound_ms(arrivals + ((size_t)s * (size_t)o.iterations + (size_t)i) *
                                                       (size_t)ranks, p2p_ms[c]) / o.iterations;
            if (!o.json_path) {
                fprintf(out, "%-28s %6d %10lld %6g %10.3f %10.3f %10.3f %8s\n",
                        contenders[a].name, ranks, (long long)o.counts[c] * element_size, o.max_delays_ms[d],
                        st.mean, 2 * st.standard_deviation, st.median, correct[s] ? "yes" : "NO");
                continue;
            }
            fprintf(out, "  {\"algorithm\": ");
            print_json_string(out, contenders[a].name);
            fprintf(out, ", \"ranks\": %d, \"count\": %lld, \"datatype\": \"%s\", \"op\": \"%s\","
                    " \"bytes\": %lld,"
                    " \"mode\": \"%s\", \"mispredicted\": %s,"
                    " \"max_delay_ms\": %g, \"compute_ms\": %g,"
                    " \"iterations\": %d, \"avg_elapsed_ms\": %.6f, \"stddev_ms\": %.6f,"
                    " \"median_ms\": %.6f, \"min_ms\": %.6f, \"max_ms\": %.6f,"
                    " \"p2p_ms\": %.6f, \"lower_bound_ms\": %.6f, \"excess_ms\": %.6f,"
                    " \"predicted_calls\": %d,"
                    " \"correct\": %s, \"mpi_library\": ",
                    ranks, (long long)o.counts[c], o.datatype_name, op_names[op],
                    (long long)o.counts[c] * element_size, o.one_late ? "one-late" : "rand-late",
                    o.mispredict ? "true" : "false", o.max_delays_ms[d], o.compute_ms, o.iterations, st.mean,
                    st.standard_deviation, st.median, st.minimum, st.maximum, p2p_ms[c],
                    bound, st.mean - bound, predicted_calls[s],
                    correct[s] ? "true" : "false");
            print_json_string(out, library);
            fprintf(out, ", \"group_colors\": ");
            if (o.group_colors == NULL) fprintf(out, "null");
            for (int r = 0; o.group_colors && r < ranks; r++)
                fprintf(out, "%s%d%s", r ? ", " : "[", (int)o.group_colors[r],
                        r + 1 < ranks ? "" : "]");
            if (tallies[s].calls > 0) { /* auto: what it ran, and the gain it predicted */
                fprintf(out, ", \"chosen\": {");
                for (int k = 0; k < tallies[s].distinct; k++) {
                    fprintf(out, "%s", k ? ", " : "");
                    print_json_string(out, tallies[s].names[k]);
                    fprintf(out, ": %d", tallies[s].counts[k]);
                }
                fprintf(out, "}, \"predicted_gain\": %.4f",
                        tallies[s].gain_sum / tallies[s].calls);
            }
            fprintf(out, ", \"ebar_ms\": [");
            for (int i = 0; i < o.iterations; i++)
                fprintf(out, "%s%.6f", i ? ", " : "",
                        ebars[(size_t)s * (size_t)o.iterations + (size_t)i]);
            fprintf(out, "]");
            fprintf(out, ", \"arrival_offsets_ms\": [");
            for (int i = 0; i < o.iterations; i++) {
                const double *at = arrivals + ((size_t)s * (size_t)o.iterations + (size_t)i) * (size_t)ranks;
                fprintf(out, "%s[", i ? ", " : "");
                for (int r = 0; r < ranks; r++) fprintf(out, "%s%.6f", r ? ", " : "", at[r]);
                fprintf(out, "]");
            }
            fprintf(out, "]}%s\n", s + 1 < series ? "," : "");
        }
        if (o.json_path) fprintf(out, "]\n");
        if (out != stdout) fclose(out);
    }
    int all_correct = 1;
    for (int s = 0; s < series; s++) all_correct &= correct[s];
    for (int a = 0; a < o.algorithm_count; a++) {
        if (contenders[a].papcoll) papcoll_comm_free(&contenders[a].papcoll);
        native_algorithm_close(&contenders[a].native);
    }
    free(send);
    free(receive);
    free(expected);
    free(all_elapsed);
    free(ebar);
    free(ebars);
    free(correct);
    free(predicted_calls);
    free(tallies);
    free(arrivals);
    free(clock_offsets);
    free(o.group_colors);
    MPI_Finalize();
    return all_correct ? 0 : 1;
}
