#define _POSIX_C_SOURCE 200809L /* nanosleep, setenv */
/* reproducible.c - reproducible mode under real MPI (docs/reproducible.md): float
 * and double sums of data with wildly different magnitudes and signed zeros, every rank
 * arriving after a random delay, through every algorithm that keeps the canonical order and
 * auto, in blocking, non-blocking and persistent calls: the result must be bit for bit the
 * canonical order's value, ((x0 op x1) op x2) ... op x(P-1), which this program computes
 * itself from every rank's input (tests/mpi/common/canonical_value.h's data), with MPI's own
 * op in MPI's operand order (MPI_Reduce_local). Sums of float and double, min of double
 * (where -0.0 and +0.0 tie), and float sums in place. Then the refusals: an algorithm that
 * does not keep the order, for floating-point data (integers pass: exact); ranks that
 * disagree on the mode; a malformed PAPCOLL_REPRODUCIBLE. */
#include <stdlib.h>
#include <time.h>

#include "common/call_modes.h"
#include "common/canonical_value.h"
#include "expect.h"

static int ranks;

static void sleep_seconds(double seconds) {
    struct timespec pause = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
    nanosleep(&pause, NULL);
}

typedef struct call_shape {
    const char *algorithm, *call_mode;
    int is_float, in_place;
    MPI_Op op;
    int64_t count;
} call_shape;

static void bitwise(papcoll_comm *pc, const call_shape *shape, uint64_t seed) {
    size_t size = shape->is_float ? sizeof(float) : sizeof(double);
    int64_t count = shape->count;
    void *input = malloc((size_t)count * size + 1), *output = malloc((size_t)count * size + 1);
    void *expected = malloc((size_t)count * size + 1);
    /* Open MPI's MPI_MIN of -0.0 and +0.0 keeps one operand in its vector loop and the
     * other in its scalar tail (docs/reproducible.md): there the min runs without -0.0 */
    int negative_zeros = 1;
#if defined(OPEN_MPI)
    negative_zeros = shape->op != MPI_MIN;
#endif
    wild_fill(shape->in_place ? output : input, shape->is_float, rank, count, seed,
              negative_zeros);
    canonical_value(expected, shape->is_float, shape->op, ranks, count, seed, negative_zeros);
    papcoll_set_algorithm(pc, shape->algorithm);
    srand((unsigned)(seed * 31 + (uint64_t)rank)); /* a random arrival order every call */
    MPI_Barrier(MPI_COMM_WORLD);
    sleep_seconds((double)(rand() % 2000) * 1e-6);
    int code = run_call(shape->call_mode, pc, shape->in_place ? MPI_IN_PLACE : input, output,
                        count, shape->is_float ? MPI_FLOAT : MPI_DOUBLE, shape->op, rank,
                        ranks);
    int64_t differ = -1;
    for (int64_t i = 0; code == MPI_SUCCESS && i < count && differ < 0; i++)
        if (memcmp((char *)output + i * (int64_t)size, (char *)expected + i * (int64_t)size,
                   size) != 0)
            differ = i;
    char what[160];
    snprintf(what, sizeof what, "%s %s %s %s%s count %lld", shape->algorithm, shape->call_mode,
             shape->is_float ? "float" : "double", shape->op == MPI_SUM ? "sum" : "min",
             shape->in_place ? " in place" : "", (long long)count);
    expect(what, differ >= 0 ? MPI_ERR_OTHER : code, MPI_SUCCESS, "success");
    if (differ >= 0)
        printf("     rank %d: element %lld differs from the canonical order's value\n", rank,
               (long long)differ);
    free(input);
    free(output);
    free(expected);
}

static void results_are_canonical(papcoll_comm *pc) {
    const char *algorithms[] = {"auto", "canonical_scatter", "canonical_gather",
                                "canonical_straggler", "linear_tree"};
    const char *call_modes[] = {"blocking", "nonblocking", "persistent"};
    /* 0, 1, fewer than P, a block each, past a segment (65536 bytes) */
    const int64_t counts[] = {0, 1, 3, 1009, 70000};
    uint64_t seed = 1;
    for (size_t a = 0; a < sizeof algorithms / sizeof algorithms[0]; a++)
        for (size_t m = 0; m < sizeof call_modes / sizeof call_modes[0]; m++)
            for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
                for (int v = 0; v < 4; v++) {
                    /* float and double sums; double min (-0.0 and +0.0 tie); float sums in
                     * place */
                    const int is_float[] = {1, 0, 0, 1}, in_place[] = {0, 0, 0, 1};
                    call_shape shape = {algorithms[a], call_modes[m], is_float[v], in_place[v],
                                        v == 2 ? MPI_MIN : MPI_SUM, counts[c]};
                    bitwise(pc, &shape, seed++);
                }
}

/* A user-defined op for which_data_pays, which never runs it. */
static void never_run(void *in, void *inout, int *length, MPI_Datatype *datatype) {
    (void)in, (void)inout, (void)length, (void)datatype;
}

/* Which data pays (papcoll_order_matters): a tie of -0.0 and +0.0 keeps either value. */
static void which_data_pays(void) {
    MPI_Op user;
    MPI_Op_create(never_run, 1, &user);
    int right = papcoll_order_matters(MPI_DOUBLE, MPI_SUM) &&
                papcoll_order_matters(MPI_FLOAT, MPI_MIN) &&
                papcoll_order_matters(MPI_DOUBLE_INT, MPI_MINLOC) &&
                papcoll_order_matters(MPI_LONG, user) &&
                !papcoll_order_matters(MPI_LONG, MPI_SUM) &&
                !papcoll_order_matters(MPI_INT, MPI_MAX) &&
                !papcoll_order_matters(MPI_2INT, MPI_MAXLOC) &&
                !papcoll_order_matters(MPI_DOUBLE, MPI_BAND);
    MPI_Op_free(&user);
    expect("order matters for floats (min, MINLOC too) and user ops, not integers",
           right ? MPI_SUCCESS : MPI_ERR_OTHER, MPI_SUCCESS, "success");
}

/* Whether name is an algorithm that keeps the canonical order (not native). */
static int keeps_order(const char *name) {
    papcoll_algorithm_info info;
    return papcoll_algorithm_find(name, &info) == PAPCOLL_OK && info.canonical_order;
}

static void refusals(papcoll_comm *pc) {
    double value = 1.0, result = 0;
    papcoll_set_algorithm(pc, "ring");
    const char *resolved = NULL;
    expect("resolve ring for a double sum",
           papcoll_resolve_algorithm(pc, 1, MPI_DOUBLE, MPI_SUM, &resolved), MPI_ERR_ARG,
           "does not keep the canonical order");
    expect("ring, double sum, reproducible mode",
           papcoll_allreduce(pc, &value, &result, 1, MPI_DOUBLE, MPI_SUM), MPI_ERR_ARG,
           "does not keep the canonical order");
    long whole = rank, total = -1;
    int code = papcoll_allreduce(pc, &whole, &total, 1, MPI_LONG, MPI_SUM);
    expect("ring, long sum (exact: pays nothing)",
           code == MPI_SUCCESS && total != (long)ranks * (ranks - 1) / 2 ? MPI_ERR_OTHER : code,
           MPI_SUCCESS, "success");
    papcoll_set_algorithm(pc, "auto");
    papcoll_choice choice;
    code = papcoll_allreduce(pc, &value, &result, 1, MPI_DOUBLE, MPI_SUM);
    papcoll_last_choice(pc, &choice);
    expect("auto never runs native in the mode",
           code == MPI_SUCCESS && !keeps_order(choice.algorithm)
               ? MPI_ERR_OTHER : code, MPI_SUCCESS, "success");
    /* with the monitor's model (measured by now: canonical_straggler ran above), auto picks
     * by it (src/core/select_canonical.c): one round for 8 B, never the P - 1 copies of a
     * 16 MiB vector where P >= 3 */
    const char *small = NULL, *large = NULL;
    code = papcoll_resolve_algorithm(pc, 1, MPI_DOUBLE, MPI_SUM, &small);
    if (code == MPI_SUCCESS)
        code = papcoll_resolve_algorithm(pc, 1 << 21, MPI_DOUBLE, MPI_SUM, &large);
    expect("auto's model in the mode: 8 B one round, 16 MiB not",
           code == MPI_SUCCESS && (!keeps_order(small) || !keeps_order(large) ||
                                   (ranks >= 2 && strcmp(small, "canonical_gather") != 0) ||
                                   (ranks >= 3 && strcmp(large, "canonical_gather") == 0))
               ? MPI_ERR_OTHER : code, MPI_SUCCESS, "success");
    papcoll_persistent *persistent = NULL;
    MPI_Request request;
    code = papcoll_allreduce_init(pc, &value, &result, 1, MPI_DOUBLE, MPI_SUM, &persistent);
    if (code == MPI_SUCCESS) code = papcoll_start(persistent, &request);
    if (code == MPI_SUCCESS) code = papcoll_wait(&request, MPI_STATUS_IGNORE);
    if (code == MPI_SUCCESS) code = papcoll_persistent_last_choice(persistent, &choice, NULL);
    expect("persistent auto tells what it ran in the mode",
           code == MPI_SUCCESS && !keeps_order(choice.algorithm)
               ? MPI_ERR_OTHER : code, MPI_SUCCESS, "success");
    papcoll_persistent_free(&persistent);
    /* the ranks disagree: rank 0's environment turns it off, the others' config on */
    papcoll_config config;
    papcoll_config_init(&config);
    config.reproducible = 1;
    if (rank == 0) setenv("PAPCOLL_REPRODUCIBLE", "0", 1);
    papcoll_comm *other = NULL;
    expect("ranks that disagree on the mode", papcoll_comm_create(MPI_COMM_WORLD, &config,
           &other), ranks > 1 ? MPI_ERR_ARG : MPI_SUCCESS,
           ranks > 1 ? "reproducible mode (config.reproducible or PAPCOLL_REPRODUCIBLE; 0: off) "
                           "differs between ranks" : "success");
    papcoll_comm_free(&other);
    setenv("PAPCOLL_REPRODUCIBLE", "maybe", 1);
    expect("PAPCOLL_REPRODUCIBLE=maybe", papcoll_comm_create(MPI_COMM_WORLD, NULL, &other),
           MPI_ERR_ARG, "is not 1/0");
    papcoll_comm_free(&other);
    unsetenv("PAPCOLL_REPRODUCIBLE");
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    papcoll_config config;
    papcoll_config_init(&config);
    config.reproducible = 1;
    papcoll_comm *pc;
    if (papcoll_comm_create(MPI_COMM_WORLD, &config, &pc) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 2);
    results_are_canonical(pc);
    which_data_pays();
    refusals(pc);
    papcoll_comm_free(&pc);
    int sums[2], mine[2] = {checks - failures, failures};
    MPI_Reduce(mine, sums, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("%d passed, %d failed\n", sums[0], sums[1]);
    MPI_Finalize();
    return failures > 0;
}
