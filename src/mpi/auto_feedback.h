/* auto_feedback.h - auto's closed loop: what auto ran is measured, and where the
 * measurements contradict the cost model, they win (auto_feedback.c says how). */
#ifndef PAPCOLL_MPI_AUTO_FEEDBACK_H
#define PAPCOLL_MPI_AUTO_FEEDBACK_H

#include <stdint.h>

#include "choose.h"
#include "native_feedback.h"
#include "native_variants.h"

enum { FEEDBACK_ENTRIES = 32 };

/* What the measurements of one model decision are kept under: the call's shape, the
 * lateness level (the highest arrival class of the call), and the two algorithms compared
 * (NULL: native). */
typedef struct feedback_key {
    int64_t count, extent;
    int commutative, level;
    const algorithm_entry *model, *alternative;
} feedback_key;

typedef struct feedback_entry {
    feedback_key key;
    int64_t serial;            /* 0: empty; a call's tag: see tag_of in auto_feedback.c */
    int64_t uses, last_used;
    feedback_samples model, alternative;
    int native_variant;        /* native's side: the variant its measurements are of */
    int overruled;             /* the measurements say the alternative is faster */
    int64_t judged[2];         /* each side's samples.added when last weighed as the
                                  side not run (0: the model's, 1: the alternative); both
                                  0: never weighed, whose first weighing may decide at once */
    int leaning;               /* the last weighing found the other side faster */
} feedback_entry;

typedef struct feedback_table {
    feedback_entry entries[FEEDBACK_ENTRIES];
    native_feedback natives;   /* which variant native runs as, per shape */
    int64_t clock, serials;
} feedback_table;

/* The closed loop's word on a model decision (choice: the model's, as choice_share
 * gave it for input; level: the call's highest arrival class; natives: the MPI library's
 * algorithms native may run as, native_variants.h): *choice becomes what runs (with
 * native_variant where native runs), with the measurements in its report. Returns the tag
 * the monitor measures the call under for the decision (>= 0), or -1 where there is
 * nothing to compare (no alternative); *native_tag the tag for native_feedback.c (>= 0 where
 * native runs as one of several variants, else -1). Counts a use when count_use, else only
 * tells (papcoll_resolve_algorithm). Local and deterministic: every rank holds the same
 * table, so every rank decides alike. */
double feedback_decide(feedback_table *table, const choice_input *input, int level,
                       const native_variants *natives, int count_use, auto_choice *choice,
                       double *native_tag);
/* A call's measured time from its last arrival (papcoll's own work done) to completion,
 * under the tags feedback_decide gave. */
void feedback_observe(feedback_table *table, double tag, double native_tag, double seconds);
void feedback_clear(feedback_table *table);

#endif /* PAPCOLL_MPI_AUTO_FEEDBACK_H */
