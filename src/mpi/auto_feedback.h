/* auto_feedback.h - auto's closed loop (issue 32): what auto ran is measured, and where the
 * measurements contradict the cost model, they win (auto_feedback.c says how). */
#ifndef PAPCOLL_MPI_AUTO_FEEDBACK_H
#define PAPCOLL_MPI_AUTO_FEEDBACK_H

#include <stdint.h>

#include "choose.h"
#include "native_variants.h"

enum { FEEDBACK_SAMPLES = 5, FEEDBACK_ENTRIES = 32 };

/* The last FEEDBACK_SAMPLES measured times of one algorithm (seconds after the last
 * arrival). */
typedef struct feedback_samples {
    double seconds[FEEDBACK_SAMPLES];
    int filled, next;
} feedback_samples;

/* What the measurements of one model decision are kept under: the call's shape, the
 * lateness level (the highest arrival class of the call), and the two algorithms compared
 * (NULL: native; has_alternative 0: the model's choice is native and nothing is compared
 * with it, only the MPI library's algorithms with each other). */
typedef struct feedback_key {
    int64_t count, extent;
    int commutative, level;
    const algorithm_entry *model, *alternative;
    int has_alternative;
} feedback_key;

typedef struct feedback_entry {
    feedback_key key;
    int64_t serial;            /* 0: empty; a call's tag: see feedback_decide */
    int64_t uses, last_used;
    feedback_samples model, alternative; /* a side that is native uses native[] instead */
    int overruled;             /* the measurements say the alternative is faster */
    /* native's side: each of the MPI library's algorithms (native_variants.h) */
    feedback_samples native[NATIVE_VARIANTS_MOST];
    int native_preferred;      /* the one native runs as, between its trials */
    int native_tries[NATIVE_VARIANTS_MOST]; /* runs of each while trying them all */
    int64_t native_uses;       /* runs of native since */
} feedback_entry;

typedef struct feedback_table {
    feedback_entry entries[FEEDBACK_ENTRIES];
    int64_t clock, serials;
} feedback_table;

/* The closed loop's word on a model decision (choice: the model's, as choice_share
 * gave it for input; level: the call's highest arrival class; natives: the native variants
 * auto may run, their names for the report): *choice becomes what runs (with
 * native_variant where native runs), with the measurements in its report. Returns the tag
 * the monitor measures the call under (>= 0), or -1 where there is nothing to compare (no
 * alternative and one native variant). Counts a use when count_use, else only tells
 * (papcoll_resolve_algorithm). Local and deterministic: every rank holds the same table,
 * so every rank decides alike. */
double feedback_decide(feedback_table *table, const choice_input *input, int level,
                       const native_variants *natives, int count_use, auto_choice *choice);
/* A call's measured time from its last arrival to completion, under the tag feedback_decide
 * gave. */
void feedback_observe(feedback_table *table, double tag, double seconds);
void feedback_clear(feedback_table *table);

#endif /* PAPCOLL_MPI_AUTO_FEEDBACK_H */
