#define _POSIX_C_SOURCE 200809L /* nanosleep, setenv */
/* reproducible.c - reproducible mode under real MPI (issue 34, docs/reproducible.md): float
 * and double sums of data with wildly different magnitudes and signed zeros, every rank
 * arriving after a random delay, through every algorithm that keeps the canonical order and
 * auto, in blocking, non-blocking and persistent calls: the result must be bit for bit the
 * canonical order's value, ((x0 + x1) + x2) ... + x(P-1), which this program computes itself
 * from every rank's input (MPI_Allgather). Then the refusals: an algorithm that does not
 * keep the order, for floating-point data (integers pass: exact); ranks that disagree on
 * the mode; a malformed PAPCOLL_REPRODUCIBLE. */
#include <stdlib.h>
#include <time.h>

#include "common/call_modes.h"
#include "common/canonical_sum.h"
#include "expect.h"

static int ranks;

static void sleep_seconds(double seconds) {
    struct timespec pause = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
    nanosleep(&pause, NULL);
}

static void bitwise(papcoll_comm *pc, const char *algorithm, const char *call_mode,
                    int is_float, int64_t count, uint64_t seed) {
    size_t size = is_float ? sizeof(float) : sizeof(double);
    void *input = malloc((size_t)count * size + 1), *output = malloc((size_t)count * size + 1);
    void *expected = malloc((size_t)count * size + 1);
    wild_fill(input, is_float, rank, count, seed);
    canonical_sum(expected, is_float, ranks, count, seed);
    papcoll_set_algorithm(pc, algorithm);
    srand((unsigned)(seed * 31 + (uint64_t)rank)); /* a random arrival order every call */
    MPI_Barrier(MPI_COMM_WORLD);
    sleep_seconds((double)(rand() % 2000) * 1e-6);
    int code = run_call(call_mode, pc, input, output, count, is_float ? MPI_FLOAT : MPI_DOUBLE,
                        MPI_SUM, rank, ranks);
    int64_t differ = -1;
    for (int64_t i = 0; code == MPI_SUCCESS && i < count && differ < 0; i++)
        if (memcmp((char *)output + i * (int64_t)size, (char *)expected + i * (int64_t)size,
                   size) != 0)
            differ = i;
    char what[128];
    snprintf(what, sizeof what, "%s %s %s count %lld", algorithm, call_mode,
             is_float ? "float" : "double", (long long)count);
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
                for (int is_float = 0; is_float < 2; is_float++)
                    bitwise(pc, algorithms[a], call_modes[m], is_float, counts[c], seed++);
}

static void refusals(papcoll_comm *pc) {
    double value = 1.0, result = 0;
    papcoll_set_algorithm(pc, "ring");
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
           code == MPI_SUCCESS && strncmp(choice.algorithm, "canonical_", 10) != 0
               ? MPI_ERR_OTHER : code, MPI_SUCCESS, "success");
    /* the ranks disagree: rank 0's environment turns it off, the others' config on */
    papcoll_config config;
    papcoll_config_init(&config);
    config.reproducible = 1;
    if (rank == 0) setenv("PAPCOLL_REPRODUCIBLE", "0", 1);
    papcoll_comm *other = NULL;
    expect("ranks that disagree on the mode", papcoll_comm_create(MPI_COMM_WORLD, &config,
           &other), ranks > 1 ? MPI_ERR_ARG : MPI_SUCCESS,
           ranks > 1 ? "on for some ranks and off for others" : "success");
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
    refusals(pc);
    papcoll_comm_free(&pc);
    int sums[2], mine[2] = {checks - failures, failures};
    MPI_Reduce(mine, sums, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("%d passed, %d failed\n", sums[0], sums[1]);
    MPI_Finalize();
    return failures > 0;
}
