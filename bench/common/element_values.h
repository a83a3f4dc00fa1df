/* element_values.h - writing, reading and checking element values of any width, for the
 * programs that fill MPI buffers with reproducible data and check a reduction's result:
 * papcoll-bench (bench/bench_data.c) and the differential test (tests/mpi/differential.c).
 * One generator (the same data on every MPI and libc) and one rounding bound, as MPICH's
 * test/mpi/util/mtest*.c serve all its tests. */
#ifndef PAPCOLL_BENCH_ELEMENT_VALUES_H
#define PAPCOLL_BENCH_ELEMENT_VALUES_H

#include <stddef.h>
#include <stdint.h>

/* xorshift64*: a seeded generator of our own. The state must not be 0. */
uint64_t next_random(uint64_t *state);
/* Uniform in [0, 1). */
double uniform(uint64_t *state);

/* Integers of 1, 2, 4 or 8 bytes by their low bits, through memcpy so no type is punned. */
void store_integer(void *at, size_t size, uint64_t bits);
/* Floating-point values: float, double or long double by size (long double can be as
 * small as double, so the test is in that order); load_real reads them back. */
void store_real(void *at, size_t size, long double value);
long double load_real(const void *at, size_t size);
/* The machine epsilon of the floating-point type of that size. */
long double epsilon_of(size_t size);
/* How far two sums of the same P values in [-1, 1], in any order, can lie apart: each
 * order is within P x eps x sum|x_i| <= P^2 eps of the exact sum; we allow 4 P^2 eps. */
long double sum_tolerance(int ranks, long double epsilon);

#endif /* PAPCOLL_BENCH_ELEMENT_VALUES_H */
