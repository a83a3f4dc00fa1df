/* tuning.h - the tuning constants in force where a caller may give none (tuning_table.c).
 * Header-only (static inline, on the public papcoll_tuning_defaults) so that the MPI side
 * and the test programs that compile its files in can use it without an internal symbol. */
#ifndef PAPCOLL_TUNING_H
#define PAPCOLL_TUNING_H

#include "papcoll_core.h"

/* *tuning, or the defaults where tuning is NULL (a zero-filled context or choice input). */
static inline papcoll_tuning tuning_in_force(const papcoll_tuning *tuning) {
    papcoll_tuning in_force;
    if (tuning != NULL) in_force = *tuning;
    else papcoll_tuning_defaults(&in_force);
    return in_force;
}

#endif /* PAPCOLL_TUNING_H */
