/* world_reference.c - see world_reference.h.
 *
 * The values are written during a collective on the world (at its papcoll communicator's
 * creation) and read during later creations, possibly by other threads at the same time:
 * atomics keep a value whole, and rank_groups.c never lets what a rank holds decide whether
 * it enters a collective (a rank that reads "not yet" only measures again). */
#define _POSIX_C_SOURCE 200809L
#include "world_reference.h"

#include <time.h>
#include <unistd.h>

static int64_t token;
static int32_t node = -1;
static double clock_offset;
static int has_clock_offset;

int world_reference_is_world(MPI_Comm comm) {
    int initialized = 0, finalized = 0, result = MPI_UNEQUAL;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    /* under MPI 4's sessions alone there is no MPI_COMM_WORLD to compare with */
    if (!initialized || finalized) return 0;
    if (MPI_Comm_compare(comm, MPI_COMM_WORLD, &result) != MPI_SUCCESS) return 0;
    return result == MPI_IDENT || result == MPI_CONGRUENT;
}

int64_t world_reference_token(void) { return __atomic_load_n(&token, __ATOMIC_RELAXED); }

int32_t world_reference_node(void) { return __atomic_load_n(&node, __ATOMIC_RELAXED); }

double world_reference_clock_offset(void) {
    double value;
    __atomic_load(&clock_offset, &value, __ATOMIC_RELAXED);
    return value;
}

int world_reference_has_clock_offset(void) {
    return __atomic_load_n(&has_clock_offset, __ATOMIC_ACQUIRE);
}

int64_t world_reference_draw(void) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int64_t drawn = ((int64_t)now.tv_sec * 1000000007 + now.tv_nsec) ^ ((int64_t)getpid() << 40);
    return drawn <= 0 ? (drawn & INT64_MAX) | 1 : drawn;
}

void world_reference_adopt_token(int64_t drawn) {
    int64_t none = 0;
    __atomic_compare_exchange_n(&token, &none, drawn, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

void world_reference_set_node(int32_t value) {
    __atomic_store_n(&node, value, __ATOMIC_RELAXED);
}

void world_reference_set_clock_offset(double value) {
    __atomic_store(&clock_offset, &value, __ATOMIC_RELAXED);
    __atomic_store_n(&has_clock_offset, 1, __ATOMIC_RELEASE);
}
