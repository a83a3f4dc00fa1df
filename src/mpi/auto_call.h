/* auto_call.h - what `auto` runs for one call: the model's decision (choose.c, shared by
 * choice_sharing.c), the closed loop's word on it (auto_feedback.c) and, where native
 * runs, which of the MPI library's algorithms (native_feedback.c). */
#ifndef PAPCOLL_MPI_AUTO_CALL_H
#define PAPCOLL_MPI_AUTO_CALL_H

#include "internal.h"

/* auto's decision for a call of this shape into *out; arrivals: P predicted arrivals
 * (seconds after the earliest) or NULL, with tau for the class's unit (arrival_class.h).
 * count_use: a call, which every rank makes (the decision may be shared by message, the
 * loops count the use, the monitor measures the call); else only asked, locally
 * (papcoll_resolve_algorithm), changing nothing. call: the call's datatype, op and kind, for
 * the rules file's rules, which decide before the model where one matches (rules.h). */
int auto_choose_for_call(papcoll_comm *pc, int64_t count, int64_t extent, int commutative,
                         const rules_call *call, const double *arrivals, double tau,
                         int count_use, auto_choice *out);

#endif /* PAPCOLL_MPI_AUTO_CALL_H */
