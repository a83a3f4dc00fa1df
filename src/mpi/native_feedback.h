/* native_feedback.h - which of the MPI library's own algorithms (native_variants.h) native
 * runs as: measured per call shape (native_feedback.c says how and why per shape). Part of
 * auto's closed loop (auto_feedback.c holds it and asks it). */
#ifndef PAPCOLL_MPI_NATIVE_FEEDBACK_H
#define PAPCOLL_MPI_NATIVE_FEEDBACK_H

#include <stdint.h>

#include "native_variants.h"
#include "papcoll_core.h"

/* samples_to_compare (papcoll_tuning) may ask for every kept sample */
/* shapes: 32, for papcoll's flat side keeps its records in the same table (shape_kind) */
enum { FEEDBACK_SAMPLES = PAPCOLL_TUNING_MOST_SAMPLES, NATIVE_FEEDBACK_SHAPES = 32 };

/* What a shape's variants are: the MPI library's algorithms native may run as, or papcoll's
 * flat algorithms that stand as native's alternative (flat_feedback.h), whose candidates
 * differ with the op's commutativity (ring only for commutative ops). The same machinery
 * picks either. */
typedef enum shape_kind {
    SHAPE_OF_NATIVE,
    SHAPE_OF_FLAT,
    SHAPE_OF_FLAT_COMMUTATIVE,
} shape_kind;

/* The last FEEDBACK_SAMPLES measured times of one algorithm (seconds after the last
 * arrival). */
typedef struct feedback_samples {
    double seconds[FEEDBACK_SAMPLES];
    int filled, next;
    int64_t added;             /* measurements ever added: new evidence since a judgement */
} feedback_samples;

double feedback_median(const feedback_samples *samples); /* 0 with none */
void feedback_samples_add(feedback_samples *samples, double seconds);
/* Whether the candidate's times beat the incumbent's beyond the noise: its median lower by
 * the loop's margin (tuning's switch_share and switch_seconds, 5 % and 1 us) and its times
 * lower by the rank test at switch_significance (0.05); native_feedback.c says why. */
int feedback_clearly_faster(const feedback_samples *candidate,
                            const feedback_samples *incumbent, const papcoll_tuning *tuning);
/* Whether a rival found faster (feedback_clearly_faster) at a weighing of its new
 * measurements takes over: where the previous weighing found it faster too (leaning), or at
 * the first weighing where its median is lower by tuning's alternative_share (25 %). */
int feedback_takes_over(const feedback_samples *rival, const feedback_samples *incumbent,
                        int faster, int first, int leaning, const papcoll_tuning *tuning);

/* Both sides need tuning's samples_to_compare measurements (3) before they are compared;
 * after that the other side (the other variants) runs every probe_every-th time (16), from
 * probe_phase (8). */

typedef struct native_shape {
    shape_kind kind;
    int64_t count, extent;
    int64_t serial;            /* 0: empty; a run's tag is serial x NATIVE_VARIANTS_MOST +
                                  its variant */
    int64_t calls;             /* auto's calls of this shape: one in probe_every is a probe
                                  (auto_feedback.c) */
    int64_t slots;             /* those probe calls where native ran: every other one a
                                  trial of another variant */
    int64_t trials;            /* trials of another variant (which one: in turn) */
    int64_t last_used;         /* the table's clock at its last use (least recent goes) */
    int preferred;             /* the one native runs as, between trials */
    int tries[NATIVE_VARIANTS_MOST]; /* runs of each while trying them all */
    int64_t judged[NATIVE_VARIANTS_MOST]; /* each one's samples.added when last weighed
                                             against the preferred (native_judge) */
    int leaning[NATIVE_VARIANTS_MOST];    /* its last weighing found it faster (0 in
                                             judged: never weighed; its first decides) */
    feedback_samples samples[NATIVE_VARIANTS_MOST];
} native_shape;

typedef struct native_feedback {
    native_shape shapes[NATIVE_FEEDBACK_SHAPES];
    int64_t clock, serials;
} native_feedback;

/* The shape's record of the kind (count elements of extent bytes), made where create and
 * there is none (the least recently used goes); NULL where not. */
native_shape *native_shape_for(native_feedback *table, shape_kind kind, int64_t count,
                               int64_t extent, int create);
/* The variant preferred now (and sets it): the one preferred, or another with measurements
 * new since it was last weighed that is faster beyond the noise (feedback_clearly_faster;
 * the fastest such); 0 until measured. Marks the new measurements weighed: each is weighed
 * once, so that the preferred's times, which change every run, do not give a stale rival a
 * new chance at every run (native_feedback.c says why). A query judges a copy. */
int native_judge(native_shape *shape, int variants, const papcoll_tuning *tuning);
/* The variant the next run of native uses (and counts the run): the default first, then
 * the others until each had its tries, then the preferred (as native_judge left it), or
 * where trial (a probe call of auto_feedback.c's) another, in turn. */
int native_next(native_shape *shape, int variants, int trial, const papcoll_tuning *tuning);
/* The variant the next run will try while some variant has not run its samples_to_compare
 * tries (native_next's first case), or -1 once all have: what a query
 * (papcoll_resolve_algorithm) reports without counting a run. */
int native_upcoming(const native_shape *shape, int variants, const papcoll_tuning *tuning);
double native_tag(const native_shape *shape, int variant);
void native_observe(native_feedback *table, double tag, double seconds);

#endif /* PAPCOLL_MPI_NATIVE_FEEDBACK_H */
