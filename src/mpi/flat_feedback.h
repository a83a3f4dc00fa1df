/* flat_feedback.h - which of papcoll's flat algorithms (recursive doubling, Rabenseifner,
 * ring) the closed loop weighs against native where the model picked native: measured per
 * shape, by the same machinery as native's variants (flat_feedback.c says why). Part of
 * auto's closed loop (auto_feedback.c asks it). */
#ifndef PAPCOLL_MPI_FLAT_FEEDBACK_H
#define PAPCOLL_MPI_FLAT_FEEDBACK_H

#include "choose.h"
#include "native_feedback.h"

enum { FLAT_CANDIDATES_MOST = 3 };
/* a candidate's index is a variant's in the shape's record (native_feedback.h) */
_Static_assert((int)FLAT_CANDIDATES_MOST <= (int)NATIVE_VARIANTS_MOST,
               "flat candidates are variants");

/* Never copied: shape may point at its own `asked`. */
typedef struct flat_side {
    native_shape *shape;   /* the shape's record; NULL: nothing to choose (one candidate, or
                              a query before the shape's first call) */
    int count;             /* candidates: the model's named one first */
    const algorithm_entry *candidates[FLAT_CANDIDATES_MOST];
    int preferred;         /* the one the decision weighs against native now */
    native_shape asked;    /* a query's copy of the record (shape points here then) */
} flat_side;

/* The flat side of a decision whose alternative to native is `named`: its candidates
 * (select_flat_candidates, on the monitor's model) and, where there are several, the
 * shape's record (made where count_use) and the one preferred (native_judge: each new
 * measurement weighed once; a query judges a copy, out->asked). out->shape is NULL where
 * there is nothing to choose. */
void flat_side_for(native_feedback *table, const choice_input *input,
                   const algorithm_entry *named, int count_use, const papcoll_tuning *tuning,
                   flat_side *out);
/* Which candidate the flat side runs as now (count_use: counts the run; trial: a probe slot
 * of the closed loop, which tries another), and its tag for native_observe (-1 where
 * nothing is counted). */
int flat_side_next(flat_side *flat, int count_use, int trial, const papcoll_tuning *tuning,
                   double *tag);
/* Whether the flat side still has candidates to try (each samples_to_compare times). */
int flat_side_untried(const flat_side *flat, const papcoll_tuning *tuning);
/* The shape's times of the candidate preferred, where there are enough; or NULL. */
const feedback_samples *flat_side_times(const flat_side *flat, const papcoll_tuning *tuning);

#endif /* PAPCOLL_MPI_FLAT_FEEDBACK_H */
