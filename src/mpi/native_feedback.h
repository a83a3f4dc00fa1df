/* native_feedback.h - which of the MPI library's own algorithms (native_variants.h) native
 * runs as: measured per call shape (native_feedback.c says how and why per shape). Part of
 * auto's closed loop (auto_feedback.c holds it and asks it). */
#ifndef PAPCOLL_MPI_NATIVE_FEEDBACK_H
#define PAPCOLL_MPI_NATIVE_FEEDBACK_H

#include <stdint.h>

#include "native_variants.h"
#include "papcoll_core.h"

/* samples_to_compare (papcoll_tuning) may ask for every kept sample */
enum { FEEDBACK_SAMPLES = PAPCOLL_TUNING_MOST_SAMPLES, NATIVE_FEEDBACK_SHAPES = 16 };

/* The last FEEDBACK_SAMPLES measured times of one algorithm (seconds after the last
 * arrival). */
typedef struct feedback_samples {
    double seconds[FEEDBACK_SAMPLES];
    int filled, next;
} feedback_samples;

double feedback_median(const feedback_samples *samples); /* 0 with none */
void feedback_samples_add(feedback_samples *samples, double seconds);
/* Whether candidate seconds (a median) beat incumbent by the loop's margin (tuning's
 * switch_share and switch_seconds, 15 % and 1 us: native_feedback.c says why). */
int feedback_clearly_faster(double candidate, double incumbent, const papcoll_tuning *tuning);

/* Both sides need tuning's samples_to_compare measurements (3) before they are compared;
 * after that the other side (the other variants) runs every probe_every-th time (16), from
 * probe_phase (8). */

typedef struct native_shape {
    int64_t count, extent;
    int64_t serial;            /* 0: empty; a run's tag is serial x NATIVE_VARIANTS_MOST +
                                  its variant */
    int64_t runs;              /* runs since every variant was tried */
    int64_t last_used;         /* the table's clock at its last use (least recent goes) */
    int preferred;             /* the one native runs as, between trials */
    int tries[NATIVE_VARIANTS_MOST]; /* runs of each while trying them all */
    feedback_samples samples[NATIVE_VARIANTS_MOST];
} native_shape;

typedef struct native_feedback {
    native_shape shapes[NATIVE_FEEDBACK_SHAPES];
    int64_t clock, serials;
} native_feedback;

/* The shape's record (count elements of extent bytes, a commutative op), made where
 * create and there is none (the least recently used goes); NULL where not. */
native_shape *native_shape_for(native_feedback *table, int64_t count, int64_t extent,
                               int create);
/* The variant preferred now: the fastest measured, by the margin (0 until measured). */
int native_preferred(const native_shape *shape, int variants, const papcoll_tuning *tuning);
/* Whether some variant has not yet run its samples_to_compare tries. */
int native_untried(const native_shape *shape, int variants, const papcoll_tuning *tuning);
/* The variant the next run of native uses (and counts the run): the default first, then
 * the others until each had its tries, then the preferred with a trial of another every
 * probe_every-th run. Sets shape->preferred first. */
int native_next(native_shape *shape, int variants, const papcoll_tuning *tuning);
double native_tag(const native_shape *shape, int variant);
void native_observe(native_feedback *table, double tag, double seconds);

#endif /* PAPCOLL_MPI_NATIVE_FEEDBACK_H */
