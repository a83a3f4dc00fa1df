/* canonical_value.h - data for reproducible mode's tests and the canonical order's
 * value the tests hold results to; header-only, as the other shared parts of
 * tests/mpi/common, and free of papcoll so that an unmodified MPI program (tests/pmpi) can
 * use it too. */
#ifndef PAPCOLL_TESTS_CANONICAL_VALUE_H
#define PAPCOLL_TESTS_CANONICAL_VALUE_H

#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Rank r's element i: magnitudes from 1e-300 to 1e300, both zeros (-0.0 only where
 * negative_zeros), and values that cancel (1e16, 1, -1e16 at ranks 0, 1, 2 of element 0:
 * the fold gives 0, (x0 + x2) + x1 gives 1). */
static double wild_value(uint64_t *state, int r, int64_t i, int negative_zeros) {
    if (i == 0) return r == 0 ? 1e16 : r == 1 ? 1.0 : r == 2 ? -1e16 : 0.0;
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t bits = *state >> 11;
    switch (bits % 6) {
    case 0: return 0.0;
    case 1: return negative_zeros ? -0.0 : 0.0;
    case 2: return (double)(bits % 1000) * 1e-300;
    case 3: return ((bits >> 8) % 2 ? -1.0 : 1.0) * (double)(bits % 97) * 1e16;
    case 4: return (double)(bits % 10007) / 7.0;
    default: return -(double)(bits % 101) * 1e298;
    }
}

/* Rank r's input of a call: count floats (is_float) or doubles, from seed. */
static void wild_fill(void *buffer, int is_float, int r, int64_t count, uint64_t seed,
                      int negative_zeros) {
    uint64_t state = seed * 1000003ull + (uint64_t)r;
    for (int64_t i = 0; i < count; i++) {
        double value = wild_value(&state, r, i, negative_zeros);
        if (is_float) ((float *)buffer)[i] = (float)value;
        else ((double *)buffer)[i] = value;
    }
}

/* The canonical order's value of the ranks' wild_fill inputs under MPI's own op:
 * ((x0 op x1) op x2) ..., each step MPI_Reduce_local(in = the fold so far, inout = the next
 * contribution), which is "in op inout" (MPI-4.1 6.9.5): the operand order reproducible
 * mode keeps, which decides min(-0.0, +0.0) too. */
static void canonical_value(void *out, int is_float, MPI_Op op, int ranks, int64_t count,
                            uint64_t seed, int negative_zeros) {
    size_t size = is_float ? sizeof(float) : sizeof(double);
    void *next = malloc((size_t)count * size + 1);
    wild_fill(out, is_float, 0, count, seed, negative_zeros);
    for (int r = 1; r < ranks; r++) {
        wild_fill(next, is_float, r, count, seed, negative_zeros);
        MPI_Reduce_local(out, next, (int)count, is_float ? MPI_FLOAT : MPI_DOUBLE, op);
        memcpy(out, next, (size_t)count * size);
    }
    free(next);
}

#endif /* PAPCOLL_TESTS_CANONICAL_VALUE_H */
