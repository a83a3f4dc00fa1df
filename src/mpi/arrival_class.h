/* arrival_class.h - predicted arrivals rounded into classes (no per-call tax).
 * Predictions differ a little from call to call; a schedule built from them, and auto's
 * choice, would then be redone on every call. Rounded to a class they repeat, so the plan
 * and the choice made for a class are reused while it holds.
 *
 * A rank's class is 0 when it is predicted to arrive less than on_time after the earliest,
 * else 1 + floor(log2(lateness / on_time)), at most 60: classes double in width. on_time
 * is the larger of unit, tau (the time to move and reduce one segment: one step of a
 * PAP-aware schedule, the least lateness whose wait it can fill; arrival_unit), and the
 * jitter of ranks released together where they share cores (papcoll_tuning's
 * arrival_jitter_seconds, 100 microseconds), which is not taken for a pattern. The unit was
 * P x tau (the whole vector's time) until SMPI showed what it hid: at P = 64, 1 MiB on
 * ethernet-1g, P x tau is 12.2 ms, so a rank 10 ms late was on time, and straggler and prr
 * ran ring's schedule (33.7 ms) where their late-rank schedules take 29.1 (SMPI, rank 1
 * 10 ms late). The straggler rule, not the class, decides whether a lateness is worth a
 * schedule of its own. The schedules are built from the
 * class's representative lateness (its geometric middle), never from the raw predictions,
 * so one class always gives one schedule. */
#ifndef PAPCOLL_MPI_ARRIVAL_CLASS_H
#define PAPCOLL_MPI_ARRIVAL_CLASS_H

#include <stdint.h>

/* jitter below, arrival_jitter_seconds: the least lateness taken for a pattern: ranks
 * released together arrive this far apart from scheduling alone where they share cores
 * (measured on the 2-core test machine with 4 ranks: tens of microseconds to milliseconds).
 * A class that flipped with that noise made auto re-decide, and the plan be rebuilt, on
 * every call; per-call predictions (monitor_source_automatic.c) are not worth their message
 * round below it either. */

/* The unit of lateness for a call whose segment takes tau: tau (above). One place, for the
 * classes, the rules' facts and the history's judgment alike. */
double arrival_unit(double tau);

/* The lateness below which a rank is on time (class 0) for this unit: the larger of unit
 * and jitter. */
double arrival_on_time(double unit, double jitter);

/* The class of one lateness for this on_time (arrival_on_time's): 0 .. 60. */
int arrival_class_level(double lateness, double on_time);

/* arrivals: P predicted arrivals in seconds after the earliest (>= 0). Fills classes (P
 * bytes) and representative (P seconds). */
void arrival_class_of(const double *arrivals, int32_t ranks, double unit, double jitter,
                      uint8_t *classes, double *representative);

#endif /* PAPCOLL_MPI_ARRIVAL_CLASS_H */
