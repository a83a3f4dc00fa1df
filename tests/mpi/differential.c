/* differential.c - papcoll_allreduce against MPI_Allreduce, run under mpiexec.
 *
 * For every algorithm (and "auto") x every predefined datatype x every op MPI allows on it x
 * counts x {separate buffers, MPI_IN_PLACE}: the result must equal MPI_Allreduce's (exactly
 * for integers, logicals and MAXLOC/MINLOC; within the tolerance below for floating point,
 * whose summation order differs between algorithms) and be bitwise identical on every rank.
 * User-defined ops too: a commutative one, and a non-commutative one (composition of affine
 * maps) that order-keeping algorithms must get exactly right and the others must refuse
 * with MPI_ERR_OP.
 *
 * Floating-point tolerance: inputs of SUM lie in [-1, 1], so any summation order is within
 * P * eps * sum|x_i| <= P^2 eps of the exact sum; we allow 4 P^2 eps (absolute). Inputs of
 * PROD lie in [0.5, 2], so any order is within a relative 2 P eps; we allow 4 P eps.
 *
 * Usage: mpi_differential [--algorithms a,b] [--counts 0,1,...] [--large-count N]
 *                         [--random CASES --seed S] [--max-message-elements M]
 *                         [--schedule S]   (recursive_multiplying's; a merge schedule
 *                                           must then refuse non-commutative ops)
 *                         [--call blocking|nonblocking|persistent]
 *   --call nonblocking: papcoll_iallreduce, with the program's own point-to-point messages
 *     posted beside it and completed in one MPI_Waitall with it (papcoll_wait first where
 *     nothing inside MPI advances papcoll: Open MPI without the progress thread);
 *   --call persistent: papcoll_allreduce_init, two starts (one in place), then free.
 *   PAPCOLL_PROGRESS=thread in the environment: MPI_Init_thread(MPI_THREAD_MULTIPLE).
 * Prints "N passed, M failed" on rank 0 and exits non-zero on any failure.
 */
#include <complex.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/core/growth.h" /* header-only: nothing internal is linked */
#include "common/call_modes.h"
#include "common/element_values.h"
#include "common/progress_setting.h"
#include "papcoll.h"

enum field_kind { SIGNED, UNSIGNED, REAL, BOOLEAN };

typedef struct field {
    int kind;
    int size;      /* bytes that carry the value (long double: 10 of its 16 on x86) */
    int offset;
} field;

typedef struct datatype_case {
    const char *name;
    MPI_Datatype datatype;
    int fields;             /* 1, 2 (complex, pairs) */
    field field[2];
    int ops;                /* bit set of the op classes below */
} datatype_case;

enum op_class {
    OPS_MAX_MIN = 1, OPS_SUM_PROD = 2, OPS_LOGICAL = 4, OPS_BITWISE = 8, OPS_LOC = 16
};

typedef struct op_case {
    const char *name;
    MPI_Op op;
    int op_class;
    int commutative;
} op_case;

#define LONG_DOUBLE_BYTES (LDBL_MANT_DIG == 64 ? 10 : (int)sizeof(long double))
#define ONE(name, type, kind, classes) \
    {#name, name, 1, {{kind, (int)sizeof(type), 0}, {0, 0, 0}}, classes}
#define INTEGER(name, type, kind) ONE(name, type, kind, OPS_MAX_MIN | OPS_SUM_PROD | OPS_LOGICAL | OPS_BITWISE)
#define PAIR(name, type, kind, size) \
    {#name, name, 2, {{kind, size, 0}, {SIGNED, (int)sizeof(int), (int)offsetof(type, index)}}, OPS_LOC}

typedef struct { float value; int index; } float_int;
typedef struct { double value; int index; } double_int;
typedef struct { long value; int index; } long_int;
typedef struct { int value; int index; } two_int;
typedef struct { short value; int index; } short_int;
typedef struct { long double value; int index; } long_double_int;

static datatype_case datatypes[] = {
    INTEGER(MPI_SIGNED_CHAR, signed char, SIGNED),
    INTEGER(MPI_UNSIGNED_CHAR, unsigned char, UNSIGNED),
    INTEGER(MPI_SHORT, short, SIGNED),
    INTEGER(MPI_UNSIGNED_SHORT, unsigned short, UNSIGNED),
    INTEGER(MPI_INT, int, SIGNED),
    INTEGER(MPI_UNSIGNED, unsigned, UNSIGNED),
    INTEGER(MPI_LONG, long, SIGNED),
    INTEGER(MPI_UNSIGNED_LONG, unsigned long, UNSIGNED),
    INTEGER(MPI_LONG_LONG, long long, SIGNED),
    INTEGER(MPI_UNSIGNED_LONG_LONG, unsigned long long, UNSIGNED),
    INTEGER(MPI_INT8_T, int8_t, SIGNED),
    INTEGER(MPI_INT16_T, int16_t, SIGNED),
    INTEGER(MPI_INT32_T, int32_t, SIGNED),
    INTEGER(MPI_INT64_T, int64_t, SIGNED),
    INTEGER(MPI_UINT8_T, uint8_t, UNSIGNED),
    INTEGER(MPI_UINT16_T, uint16_t, UNSIGNED),
    INTEGER(MPI_UINT32_T, uint32_t, UNSIGNED),
    INTEGER(MPI_UINT64_T, uint64_t, UNSIGNED),
    ONE(MPI_FLOAT, float, REAL, OPS_MAX_MIN | OPS_SUM_PROD),
    ONE(MPI_DOUBLE, double, REAL, OPS_MAX_MIN | OPS_SUM_PROD),
    {"MPI_LONG_DOUBLE", MPI_LONG_DOUBLE, 1, {{REAL, LONG_DOUBLE_BYTES, 0}, {0, 0, 0}},
     OPS_MAX_MIN | OPS_SUM_PROD},
    {"MPI_C_FLOAT_COMPLEX", MPI_C_FLOAT_COMPLEX, 2,
     {{REAL, sizeof(float), 0}, {REAL, sizeof(float), sizeof(float)}}, OPS_SUM_PROD},
    {"MPI_C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX, 2,
     {{REAL, sizeof(double), 0}, {REAL, sizeof(double), sizeof(double)}}, OPS_SUM_PROD},
    {"MPI_C_LONG_DOUBLE_COMPLEX", MPI_C_LONG_DOUBLE_COMPLEX, 2,
     {{REAL, LONG_DOUBLE_BYTES, 0}, {REAL, LONG_DOUBLE_BYTES, sizeof(long double)}},
     OPS_SUM_PROD},
    ONE(MPI_C_BOOL, bool, BOOLEAN, OPS_LOGICAL),
    ONE(MPI_BYTE, unsigned char, UNSIGNED, OPS_BITWISE),
    PAIR(MPI_FLOAT_INT, float_int, REAL, sizeof(float)),
    PAIR(MPI_DOUBLE_INT, double_int, REAL, sizeof(double)),
    PAIR(MPI_LONG_INT, long_int, SIGNED, sizeof(long)),
    PAIR(MPI_2INT, two_int, SIGNED, sizeof(int)),
    PAIR(MPI_SHORT_INT, short_int, SIGNED, sizeof(short)),
    PAIR(MPI_LONG_DOUBLE_INT, long_double_int, REAL, LONG_DOUBLE_BYTES),
};
enum { DATATYPE_COUNT = sizeof datatypes / sizeof datatypes[0] };

/* ---- user-defined ops ----------------------------------------------------------------- */

/* Commutative: a plain integer sum written by the user. */
static void user_sum(void *in, void *inout, int *length, MPI_Datatype *datatype) {
    (void)datatype;
    for (int i = 0; i < *length; i++) ((int *)inout)[i] += ((int *)in)[i];
}

/* Non-commutative but associative: x op y = "apply x, then y" for affine maps t -> a t + b
 * modulo 2^32. MPI's convention: inout = in op inout, with in the left operand. */
static void affine_compose(void *in, void *inout, int *length, MPI_Datatype *datatype) {
    (void)datatype;
    uint32_t *x = in, *y = inout;
    for (int i = 0; i < *length; i++) {
        uint32_t a = x[2 * i] * y[2 * i], b = y[2 * i] * x[2 * i + 1] + y[2 * i + 1];
        y[2 * i] = a;
        y[2 * i + 1] = b;
    }
}

/* ---- data ----------------------------------------------------------------------------- */

/* The generator, widths and rounding bound are bench/common/element_values.h, shared with
 * papcoll-bench; what values each (datatype, op) gets is this test's own. */
static uint64_t random_state;

static uint64_t draw(void) { return next_random(&random_state); }
static double uniform_between(double low, double high) {
    return low + (high - low) * uniform(&random_state);
}

/* Seeds the generator (xorshift64* must not start at 0). */
static void seed_random(uint64_t seed) { random_state = 0x9E3779B97F4A7C15ull ^ seed; }

static void store_whole(char *at, int size, int64_t value) {
    store_integer(at, (size_t)size, (uint64_t)value);
}

/* Values chosen so no result overflows and floating-point error stays bounded. */
static void fill(char *buffer, int64_t count, int64_t extent, const datatype_case *type,
                 const op_case *op, int rank) {
    memset(buffer, 0, (size_t)(count * extent));
    for (int64_t i = 0; i < count; i++) {
        char *element = buffer + i * extent;
        for (int f = 0; f < type->fields; f++) {
            const field *fd = &type->field[f];
            char *at = element + fd->offset;
            if (op->op_class == OPS_LOC && f == 1) { store_whole(at, fd->size, rank); continue; }
            if (fd->kind == REAL) {
                double value = op->op == MPI_PROD ? uniform_between(0.5, 2.0)
                               : op->op_class == OPS_LOC ? (double)(draw() % 5)
                                                         : uniform_between(-1.0, 1.0);
                store_real(at, (size_t)fd->size, value);
            } else if (fd->kind == BOOLEAN) {
                bool value = draw() % 3 != 0;
                memcpy(at, &value, sizeof value);
            } else if (op->op_class == OPS_BITWISE) {
                uint64_t value = draw();
                memcpy(at, &value, (size_t)fd->size);
            } else if (op->op == MPI_PROD) {
                store_whole(at, fd->size, fd->kind == SIGNED ? (draw() % 2 ? 1 : -1) : 1);
            } else if (op->op_class == OPS_LOGICAL) {
                store_whole(at, fd->size, (int64_t)(draw() % 3));
            } else { /* SUM, MAX, MIN, MAXLOC, MINLOC: small, so 8 ranks cannot overflow */
                store_whole(at, fd->size,
                              (int64_t)(draw() % 15) - (fd->kind == SIGNED ? 7 : 0));
            }
        }
    }
}

/* FNV-1a over the value-carrying bytes: identical results hash identically. */
static uint64_t hash_result(const char *buffer, int64_t count, int64_t extent,
                            const datatype_case *type) {
    uint64_t hash = 1469598103934665603ull;
    for (int64_t i = 0; i < count; i++)
        for (int f = 0; f < type->fields; f++) {
            const unsigned char *at = (const unsigned char *)buffer + i * extent + type->field[f].offset;
            for (int b = 0; b < type->field[f].size; b++) hash = (hash ^ at[b]) * 1099511628211ull;
        }
    return hash;
}

/* First element where result and reference differ beyond tolerance, or -1. */
static int64_t first_difference(const char *result, const char *reference, int64_t count,
                                int64_t extent, const datatype_case *type, const op_case *op,
                                int ranks) {
    long double epsilon = epsilon_of((size_t)type->field[0].size);
    for (int64_t i = 0; i < count; i++)
        for (int f = 0; f < type->fields; f++) {
            const field *fd = &type->field[f];
            const char *a = result + i * extent + fd->offset, *b = reference + i * extent + fd->offset;
            if (fd->kind != REAL || op->op_class == OPS_LOC || op->op_class == OPS_MAX_MIN) {
                if (memcmp(a, b, (size_t)fd->size) != 0) return i;
                continue;
            }
            long double x = load_real(a, (size_t)fd->size), y = load_real(b, (size_t)fd->size);
            long double allowed = op->op == MPI_PROD ? 4.0L * ranks * epsilon * fabsl(y)
                                                     : sum_tolerance(ranks, epsilon);
            if (op->op == MPI_PROD && type->fields == 2) /* complex: |z| < 3, parts mix */
                allowed = 16.0L * ranks * epsilon * powl(3.0L, ranks);
            if (!(fabsl(x - y) <= allowed)) return i;
        }
    return -1;
}

/* ---- the run -------------------------------------------------------------------------- */

typedef struct options {
    const char *algorithms[32];
    int algorithm_count;
    int64_t counts[16];
    int count_count;
    int64_t large_count;
    long random_cases;
    uint64_t seed;
    int64_t max_message_elements;
    int representative;      /* only a representative set of (datatype, op) pairs */
} options;

typedef struct totals {
    long passed, failed;
    uint64_t *hashes;        /* one per case, compared across ranks at the end */
    long hash_count;
    size_t hash_capacity;
} totals;

static int rank, ranks, verbose;

static void report_failure(totals *t, const char *algorithm, const char *type, const char *op,
                           int64_t count, int in_place, const char *what) {
    t->failed++;
    if (t->failed <= 20)
        fprintf(stderr, "FAIL rank %d: %s %s %s count=%" PRId64 "%s: %s\n", rank, algorithm, type,
                op, count, in_place ? " in-place" : "", what);
}

static void remember_hash(totals *t, uint64_t hash) {
    if (grow_array((void **)&t->hashes, &t->hash_capacity, (size_t)t->hash_count + 1,
                   sizeof *t->hashes) != 0) {
        fprintf(stderr, "rank %d: out of memory for the result hashes\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    t->hashes[t->hash_count++] = hash;
}

static const char *schedule_option; /* --schedule: recursive_multiplying's schedule */
static int color_blocks = 0;        /* --color-blocks K: groups of K consecutive ranks;
                                       -1 (--color-blocks uneven): sizes 1, 2, 3, ... */
static int use_tree = 0;            /* --tree: ranks alternate between two switches */
static const char *inner_option, *outer_option; /* --inner, --outer */

static const char *call_mode = "blocking"; /* --call */

static int order_keeping(const char *algorithm) {
    if (strcmp(algorithm, "auto") == 0) return 1;
    papcoll_algorithm_info info;
    if (papcoll_algorithm_find(algorithm, &info) != PAPCOLL_OK || info.commutative_only)
        return 0;
    int32_t reorders = 0; /* a merge schedule reorders, and must be refused */
    if (strcmp(algorithm, "recursive_multiplying") == 0 && schedule_option)
        papcoll_rm_check(schedule_option, ranks, &reorders, NULL, 0);
    return !reorders;
}

static int monitored_calls; /* blocking calls through the arrival monitor so far */

/* One case: returns after recording pass / fail. */
static void run_case(papcoll_comm *pc, totals *t, const char *algorithm,
                     const datatype_case *type, const op_case *op, int64_t count, int in_place,
                     uint64_t seed) {
    MPI_Aint lower_bound, extent;
    MPI_Type_get_extent(type->datatype, &lower_bound, &extent);
    size_t bytes = (size_t)(count * extent) + 1;
    char *input = malloc(bytes), *result = malloc(bytes), *reference = malloc(bytes);
    seed_random(seed * 1000003u + (uint64_t)rank);
    fill(input, count, extent, type, op, rank);
    double started = MPI_Wtime();
    MPI_Allreduce(input, reference, (int)count, type->datatype, op->op, MPI_COMM_WORLD);
    double referenced = MPI_Wtime();
    papcoll_set_algorithm(pc, algorithm);
    /* The PAP-aware algorithms build from predicted arrivals: give each rank a made-up
     * prediction (the same on every run), so their schedules follow an arrival order that
     * changes from case to case. */
    papcoll_algorithm_info info;
    int pap_aware = papcoll_algorithm_find(algorithm, &info) == PAPCOLL_OK && info.needs_arrivals;
    if (pap_aware) papcoll_predict_arrival(pc, (double)((seed * 7 + (uint64_t)rank * 13) % 5) * 1e-4);
    int code;
    if (in_place) {
        memcpy(result, input, bytes - 1);
        code = run_call(call_mode, pc, MPI_IN_PLACE, result, count, type->datatype, op->op,
                        rank, ranks);
    } else {
        memset(result, 0xA5, bytes);
        code = run_call(call_mode, pc, input, result, count, type->datatype, op->op, rank,
                        ranks);
    }
    if (verbose && rank == 0)
        fprintf(stderr, "%s %s %s count=%" PRId64 "%s: reference %.1f ms, papcoll %.1f ms\n",
                algorithm, type->name, op->name, count, in_place ? " in-place" : "",
                (referenced - started) * 1e3, (MPI_Wtime() - referenced) * 1e3);
    int blocking = strcmp(call_mode, "blocking") == 0, first_monitored = monitored_calls == 0;
    monitored_calls += (pap_aware || strcmp(algorithm, "auto") == 0) && blocking && !code;
    if (!op->commutative && !order_keeping(algorithm)) {
        /* must be refused, on every rank, without communicating */
        if (code == MPI_ERR_OP) t->passed++;
        else report_failure(t, algorithm, type->name, op->name, count, in_place,
                            "a non-commutative op was not refused with MPI_ERR_OP");
    } else if (code != MPI_SUCCESS) {
        report_failure(t, algorithm, type->name, op->name, count, in_place,
                       papcoll_error_string(code));
    } else {
        int64_t at = first_difference(result, reference, count, extent, type, op, ranks);
        char what[96];
        snprintf(what, sizeof what, "differs from MPI_Allreduce at element %" PRId64, at);
        int predicted = 1;
        /* per-call predictions serve blocking calls only, and not the first monitored call:
         * AUTOMATIC sends them in its edge mode, entered from what a call taught it */
        if (pap_aware && blocking && !first_monitored)
            papcoll_last_prediction(pc, &predicted, NULL, NULL);
        if (at >= 0) report_failure(t, algorithm, type->name, op->name, count, in_place, what);
        else if (!predicted)
            report_failure(t, algorithm, type->name, op->name, count, in_place,
                           "ran the ring fallback although every rank gave a prediction");
        else t->passed++;
        remember_hash(t, hash_result(result, count, extent, type));
    }
    free(input);
    free(result);
    free(reference);
}

static const op_case predefined_ops[] = {
    {"MPI_MAX", 0, OPS_MAX_MIN, 1},     {"MPI_MIN", 0, OPS_MAX_MIN, 1},
    {"MPI_SUM", 0, OPS_SUM_PROD, 1},    {"MPI_PROD", 0, OPS_SUM_PROD, 1},
    {"MPI_LAND", 0, OPS_LOGICAL, 1},    {"MPI_LOR", 0, OPS_LOGICAL, 1},
    {"MPI_LXOR", 0, OPS_LOGICAL, 1},    {"MPI_BAND", 0, OPS_BITWISE, 1},
    {"MPI_BOR", 0, OPS_BITWISE, 1},     {"MPI_BXOR", 0, OPS_BITWISE, 1},
    {"MPI_MAXLOC", 0, OPS_LOC, 1},      {"MPI_MINLOC", 0, OPS_LOC, 1},
};
enum { OP_COUNT = sizeof predefined_ops / sizeof predefined_ops[0] };
static op_case ops[OP_COUNT];

static void init_ops(void) {
    MPI_Op handles[OP_COUNT] = {MPI_MAX,  MPI_MIN,  MPI_SUM,  MPI_PROD, MPI_LAND,   MPI_LOR,
                                MPI_LXOR, MPI_BAND, MPI_BOR,  MPI_BXOR, MPI_MAXLOC, MPI_MINLOC};
    for (int i = 0; i < OP_COUNT; i++) {
        ops[i] = predefined_ops[i];
        ops[i].op = handles[i];
    }
}

static void parse_list(const char *text, int64_t *values, int *count, int limit) {
    *count = 0;
    for (const char *at = text; *at && *count < limit;) {
        values[(*count)++] = strtoll(at, (char **)&at, 10);
        if (*at == ',') at++;
    }
}

static void parse_options(int argc, char **argv, options *o) {
    static char algorithm_text[1024];
    o->algorithm_count = 0;
    o->count_count = -1;
    o->large_count = (1 << 20) + 3;
    o->seed = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--algorithms") == 0) {
            snprintf(algorithm_text, sizeof algorithm_text, "%s", argv[i + 1]);
            for (char *name = strtok(algorithm_text, ","); name && o->algorithm_count < 32;
                 name = strtok(NULL, ","))
                o->algorithms[o->algorithm_count++] = name;
        } else if (strcmp(argv[i], "--counts") == 0) {
            parse_list(argv[i + 1], o->counts, &o->count_count, 16);
        } else if (strcmp(argv[i], "--large-count") == 0) {
            o->large_count = strtoll(argv[i + 1], NULL, 10);
        } else if (strcmp(argv[i], "--random") == 0) {
            o->random_cases = strtol(argv[i + 1], NULL, 10);
        } else if (strcmp(argv[i], "--seed") == 0) {
            o->seed = strtoull(argv[i + 1], NULL, 10);
        } else if (strcmp(argv[i], "--matrix") == 0) {
            o->representative = strcmp(argv[i + 1], "representative") == 0;
        } else if (strcmp(argv[i], "--schedule") == 0) {
            schedule_option = argv[i + 1];
        } else if (strcmp(argv[i], "--color-blocks") == 0) {
            color_blocks = strcmp(argv[i + 1], "uneven") == 0 ? -1 : atoi(argv[i + 1]);
        } else if (strcmp(argv[i], "--tree") == 0) {
            use_tree = 1;
            i--; /* a flag without a value */
        } else if (strcmp(argv[i], "--inner") == 0) {
            inner_option = argv[i + 1];
        } else if (strcmp(argv[i], "--outer") == 0) {
            outer_option = argv[i + 1];
        } else if (strcmp(argv[i], "--call") == 0) {
            call_mode = argv[i + 1];
            if (strcmp(call_mode, "blocking") != 0 && strcmp(call_mode, "nonblocking") != 0 &&
                strcmp(call_mode, "persistent") != 0) {
                fprintf(stderr, "--call %s: use blocking, nonblocking or persistent\n",
                        call_mode);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
        } else if (strcmp(argv[i], "--max-message-elements") == 0) {
            o->max_message_elements = strtoll(argv[i + 1], NULL, 10);
        }
    }
    if (o->algorithm_count == 0) {
        o->algorithms[o->algorithm_count++] = "auto";
        for (int32_t a = 0; a < papcoll_algorithm_count() && o->algorithm_count < 32; a++) {
            papcoll_algorithm_info info;
            papcoll_algorithm_get(a, &info);
            if (!info.reduce_scatter) o->algorithms[o->algorithm_count++] = info.name;
        }
    }
    if (o->count_count < 0) {
        int64_t defaults[] = {0, 1, ranks - 1, ranks + 1, 1009};
        o->count_count = 5;
        memcpy(o->counts, defaults, sizeof defaults);
    }
}

/* Oversubscribed (more ranks than cores) every message waits for a time slice with MPICH,
 * whose waits spin, so the full datatype x op matrix runs where that does not happen (P <= 2,
 * and every P under `make test-long`); the executor's datatype handling does not depend on
 * P, and the schedules do not depend on the datatype. Elsewhere this set stands for it: each
 * kind of field (signed, unsigned, real, complex, logical, pair) with an op of each class. */
static int representative_case(const datatype_case *type, const op_case *op) {
    return (type->datatype == MPI_FLOAT && op->op == MPI_SUM) ||
           (type->datatype == MPI_DOUBLE && op->op == MPI_PROD) ||
           (type->datatype == MPI_UNSIGNED && op->op == MPI_BXOR) ||
           (type->datatype == MPI_LONG_LONG && op->op == MPI_MIN) ||
           (type->datatype == MPI_C_DOUBLE_COMPLEX && op->op == MPI_SUM) ||
           (type->datatype == MPI_C_BOOL && op->op == MPI_LOR) ||
           (type->datatype == MPI_2INT && op->op == MPI_MAXLOC);
}

/* The large count costs most: one representative pair per kind of datatype and op. */
static int large_count_case(const datatype_case *type, const op_case *op) {
    return (type->datatype == MPI_FLOAT && op->op == MPI_SUM) ||
           (type->datatype == MPI_INT && op->op == MPI_BXOR) ||
           (type->datatype == MPI_DOUBLE_INT && op->op == MPI_MAXLOC);
}

int main(int argc, char **argv) {
    start_mpi_for_progress_setting(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    init_ops();
    verbose = getenv("PAPCOLL_TEST_VERBOSE") != NULL;
    options o;
    memset(&o, 0, sizeof o);
    parse_options(argc, argv, &o);

    papcoll_config config;
    papcoll_config_init(&config);
    config.max_message_elements = o.max_message_elements;
    config.parameters.schedule = schedule_option;
    config.parameters.inner_algorithm = inner_option;
    config.parameters.outer_algorithm = outer_option;
    if (color_blocks != 0) {
        config.grouping = PAPCOLL_GROUPS_COLOR;
        if (color_blocks > 0) {
            config.group_color = rank / color_blocks;
        } else { /* uneven: group g has g + 1 ranks */
            int first = 0, group = 0;
            while (first + group + 1 <= rank) first += ++group;
            config.group_color = 100 - group; /* ids need not be ordered */
        }
    }
    /* --tree: a root switch (vertex 0), switches 1 and 2, host 3 + r for rank r, under
     * switch 1 + r % 2: the depth-first ring is 0 2 4 ... 1 3 5 ... */
    int32_t tree_parent[3 + 64], tree_ranks[64];
    papcoll_sim_topology tree;
    memset(&tree, 0, sizeof tree);
    if (use_tree && ranks <= 64) {
        tree_parent[0] = -1;
        tree_parent[1] = tree_parent[2] = 0;
        for (int r = 0; r < ranks; r++) {
            tree_parent[3 + r] = 1 + r % 2;
            tree_ranks[r] = 3 + r;
        }
        tree.vertex_count = 3 + ranks;
        tree.parent = tree_parent;
        tree.rank_vertex = tree_ranks;
        tree.rank_count = ranks;
        config.parameters.tree = &tree;
    }
    papcoll_comm *pc;
    if (papcoll_comm_create(MPI_COMM_WORLD, &config, &pc) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 2);

    MPI_Op user_ops[2];
    MPI_Op_create(user_sum, 1, &user_ops[0]);
    MPI_Op_create(affine_compose, 0, &user_ops[1]);
    MPI_Datatype affine_map;
    MPI_Type_contiguous(2, MPI_UINT32_T, &affine_map);
    MPI_Type_commit(&affine_map);
    datatype_case user_types[2] = {
        {"MPI_INT", MPI_INT, 1, {{SIGNED, sizeof(int), 0}, {0, 0, 0}}, 0},
        {"affine_map", affine_map, 2, {{UNSIGNED, 4, 0}, {UNSIGNED, 4, 4}}, 0}};
    op_case user_cases[2] = {{"user_sum", user_ops[0], 0, 1},
                             {"affine_compose", user_ops[1], OPS_BITWISE, 0}};

    totals t = {0};
    uint64_t seed = o.seed;
    if (o.random_cases > 0) {
        seed_random(o.seed); /* same choices on every rank */
        for (long c = 0; c < o.random_cases; c++) {
            uint64_t pick = draw();
            const char *algorithm = o.algorithms[pick % (uint64_t)o.algorithm_count];
            const datatype_case *type = &datatypes[(pick >> 8) % DATATYPE_COUNT];
            const op_case *op;
            do op = &ops[draw() % OP_COUNT]; while (!(op->op_class & type->ops));
            int64_t count = (int64_t)(draw() % 3 ? draw() % 5000 : draw() % 300000);
            int in_place = (int)(draw() % 2);
            uint64_t state = random_state;
            run_case(pc, &t, algorithm, type, op, count, in_place, seed++);
            random_state = state;
        }
    } else {
        for (int a = 0; a < o.algorithm_count; a++) {
            for (int d = 0; d < DATATYPE_COUNT; d++)
                for (int p = 0; p < OP_COUNT; p++) {
                    if (!(ops[p].op_class & datatypes[d].ops)) continue;
                    if (o.representative && !representative_case(&datatypes[d], &ops[p]))
                        continue;
                    for (int c = 0; c < o.count_count; c++)
                        for (int in_place = 0; in_place < 2; in_place++)
                            run_case(pc, &t, o.algorithms[a], &datatypes[d], &ops[p], o.counts[c],
                                     in_place, seed++);
                    if (o.large_count > 0 && large_count_case(&datatypes[d], &ops[p]) &&
                        (!o.representative || datatypes[d].datatype == MPI_FLOAT))
                        for (int in_place = 0; in_place < 2; in_place++)
                            run_case(pc, &t, o.algorithms[a], &datatypes[d], &ops[p],
                                     o.large_count, in_place, seed++);
                }
            for (int u = 0; u < 2; u++) {
                for (int c = 0; c < o.count_count; c++)
                    for (int in_place = 0; in_place < 2; in_place++)
                        run_case(pc, &t, o.algorithms[a], &user_types[u], &user_cases[u],
                                 o.counts[c], in_place, seed++);
                if (o.large_count > 0)
                    run_case(pc, &t, o.algorithms[a], &user_types[u], &user_cases[u],
                             o.large_count, 0, seed++);
            }
        }
    }

    /* Bitwise identical on every rank: compare every case's hash with rank 0's. */
    long hash_count = t.hash_count;
    MPI_Bcast(&hash_count, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    uint64_t *root_hashes = malloc((size_t)(hash_count + 1) * sizeof *root_hashes);
    if (rank == 0) memcpy(root_hashes, t.hashes, (size_t)hash_count * sizeof *root_hashes);
    MPI_Bcast(root_hashes, (int)hash_count, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    long differing = hash_count != t.hash_count; /* a rank that failed a case has fewer */
    for (long h = 0; h < hash_count && h < t.hash_count; h++)
        differing += root_hashes[h] != t.hashes[h];
    if (differing) {
        fprintf(stderr, "FAIL rank %d: %ld results differ bitwise from rank 0's\n", rank, differing);
        t.failed += differing;
    }

    long counts[2] = {t.passed, t.failed}, sums[2];
    MPI_Reduce(counts, sums, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("%ld passed, %ld failed\n", sums[0], sums[1]);
    int failed_anywhere = 0, failed_here = t.failed > 0;
    MPI_Allreduce(&failed_here, &failed_anywhere, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);

    free(root_hashes);
    free(t.hashes);
    MPI_Op_free(&user_ops[0]);
    MPI_Op_free(&user_ops[1]);
    MPI_Type_free(&affine_map);
    papcoll_comm_free(&pc);
    MPI_Finalize();
    return failed_anywhere ? 1 : 0;
}
