/* choose.h - what `auto` runs for a call (issue 20): the cost model's fastest algorithm for
 * the predicted arrivals, or MPI_Allreduce itself (src/core/select.c decides; choose.c
 * caches). */
#ifndef PAPCOLL_MPI_CHOOSE_H
#define PAPCOLL_MPI_CHOOSE_H

#include <stdint.h>

#include "papcoll.h"
#include "schedule.h"

/* The decision for one call. */
typedef struct auto_choice {
    const algorithm_entry *algorithm; /* NULL: native (MPI_Allreduce) */
    papcoll_choice report;            /* what papcoll_last_choice tells */
} auto_choice;

/* What a decision depends on; every field identical on every rank. */
typedef struct choice_input {
    int32_t ranks;
    int64_t count, extent;
    int commutative;
    const papcoll_parameters *parameters;
    const uint8_t *arrival_class;   /* P bytes (arrival_class.h), or NULL: none predicted */
    uint8_t *profile;               /* P bytes of scratch for the sorted classes */
    const double *arrivals;         /* the class's representative arrivals (P seconds) */
    double tau;                     /* what the PAP-aware algorithms are built with */
    int calibrated;                 /* the model below holds measured numbers */
    double latency, seconds_per_byte, reduce_seconds_per_byte;
} choice_input;

/* Decisions kept: rand-late arrivals give a new sorted class profile on most calls at
 * first, and a miss simulates every candidate on the late rank's path. */
enum { CHOICE_CACHE_SIZE = 32 };

typedef struct choice_entry {
    auto_choice decided;
    int64_t count, extent;
    int commutative;
    uint8_t *arrival_class;         /* owned; NULL: none */
    int32_t ranks;
    int64_t last_used;              /* 0: empty */
} choice_entry;

typedef struct choice_cache {
    choice_entry entries[CHOICE_CACHE_SIZE];
    int64_t clock;
} choice_cache;

/* Decides for input, from the cache when this shape and sorted arrival-class profile were
 * decided before (choose.c says why sorted).
 * Local (no MPI call) and deterministic: the same input gives the same choice on every
 * rank. Returns MPI_SUCCESS or MPI_ERR_NO_MEM. */
int choose_algorithm(const choice_input *input, choice_cache *cache, auto_choice *out);
void choice_cache_clear(choice_cache *cache);

#endif /* PAPCOLL_MPI_CHOOSE_H */
