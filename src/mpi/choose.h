/* choose.h - what `auto` runs for a call: the cost model's fastest algorithm for
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
    int native_variant;               /* native: which of native_variants.h (0: default) */
    papcoll_choice report;            /* what papcoll_last_choice tells */
} auto_choice;

/* What a decision depends on; every field identical on every rank. */
typedef struct choice_input {
    int32_t ranks;
    int64_t count, extent;
    int commutative;
    const papcoll_parameters *parameters;
    const papcoll_tuning *tuning;   /* the communicator's (config.tuning), or NULL: defaults */
    const uint8_t *arrival_class;   /* P bytes (arrival_class.h), or NULL: none predicted */
    uint8_t *profile;               /* P bytes of scratch for the sorted classes */
    const double *arrivals;         /* the class's representative arrivals (P seconds) */
    double tau;                     /* what the PAP-aware algorithms are built with */
    int calibrated;                 /* the model below holds measured numbers */
    /* native can run this call: MPI_Allreduce's int count holds it, and the call kind may
     * run the MPI's own (mpi_features.h: PAPCOLL_NONBLOCKING_NATIVE); where not, a fixed
     * rule of papcoll's stands in for native (choose.c) */
    int native_runs;
    double latency, seconds_per_byte, reduce_seconds_per_byte;
} choice_input;

/* Decisions kept: rand-late arrivals give a new sorted class profile on most calls at
 * first, and a miss costs a message round at least (choice_sharing.c). */
enum { CHOICE_CACHE_SIZE = 32 };

typedef struct choice_entry {
    auto_choice decided;
    int64_t count, extent;
    int commutative, native_runs;
    int has_profile;                /* 0: decided without predicted arrivals */
    uint8_t *arrival_class;         /* the sorted profile: P bytes of the cache's */
    int32_t ranks;
    int64_t last_used;              /* 0: empty */
} choice_entry;

/* Every rank's cache must hold the same keys in the same order of use: choice_sharing.c
 * sends a decision only where the cache misses, and every rank must agree on that. So only
 * calls touch it (papcoll_resolve_algorithm only looks), and it never allocates after
 * choice_cache_init (a rank that could not keep a decision would miss alone). */
typedef struct choice_cache {
    choice_entry entries[CHOICE_CACHE_SIZE];
    uint8_t *profiles;              /* CHOICE_CACHE_SIZE x P bytes, one row per entry */
    int64_t clock;
} choice_cache;

/* MPI_SUCCESS or MPI_ERR_NO_MEM. */
int choice_cache_init(choice_cache *cache, int32_t ranks);
/* 1 and *out (decided_by -1) where this shape and sorted arrival-class profile were
 * decided before; touch: count the use (for the least recently used to go first). */
int choice_cache_find(const choice_input *input, choice_cache *cache, int touch,
                      auto_choice *out);
/* The simulator's model from the monitor's three numbers (one-way latency, seconds per
 * byte, reduce seconds per byte): what every decision of auto is made with. */
void choice_model(double latency, double seconds_per_byte, double reduce_seconds_per_byte,
                  papcoll_sim_model *model);
/* The model's decision for input (src/core/select.c): local and deterministic, the same
 * input gives the same choice on every rank, but it simulates every candidate. */
void choice_decide(const choice_input *input, auto_choice *out);
/* Keeps decided for input, in place of the least recently used entry. */
void choice_cache_keep(const choice_input *input, choice_cache *cache,
                       const auto_choice *decided);
/* Sets choice->algorithm from choice->report.algorithm (NULL for "native"). */
void choice_from_report(auto_choice *choice);
/* Forgets every decision (the memory stays for the next). */
void choice_cache_clear(choice_cache *cache);
void choice_cache_release(choice_cache *cache);

#endif /* PAPCOLL_MPI_CHOOSE_H */
