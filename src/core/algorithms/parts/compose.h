/* compose.h - running one algorithm's schedule inside another's, on a subset of the ranks:
 * the building block of the hierarchical algorithms (hr1, hr2, smp_binomial,
 * smp_butterfly), which run a flat all-reduce among group leaders or group members. */
#ifndef PAPCOLL_ALGORITHMS_PARTS_COMPOSE_H
#define PAPCOLL_ALGORITHMS_PARTS_COMPOSE_H

#include <stdint.h>

#include "../../hidden.h"
#include "../../schedule.h"

/* Appends to `out` the schedule that `algorithm` gives member `me` of `members` (global
 * ranks, in the sub-algorithm's rank order), working in place on out's receive buffer
 * [0, count): the sub-schedule's send and receive buffers both become out's receive buffer
 * (every algorithm is verified under MPI_IN_PLACE), its scratch buffers new scratch buffers
 * of out, its peers members[peer], its tags tag_base + tag (which must stay below
 * tag_limit). Its first ops wait for after[0 .. after_count). Returns the index of an op that
 * completes after every appended op, or SCHED_NONE (and a sticky failure in out). The
 * algorithm must be a flat all-reduce: not PAP-aware, not hierarchical, not a reduce-scatter.
 * It is built with a zero context, i.e. its defaults (choice: a recursive_multiplying
 * schedule or segment size set for the whole communicator is for P ranks, not for a group,
 * so it is not passed on). */
PAPCOLL_HIDDEN
int32_t compose_embed(papcoll_schedule *out, const char *algorithm, const int32_t *members,
                      int32_t member_count, int32_t me, int64_t count, int32_t elem_size,
                      int32_t tag_base, int32_t tag_limit, const int32_t *after,
                      int32_t after_count);

/* PAPCOLL_OK if `algorithm` exists and is flat, else a sticky failure in out naming it. */
PAPCOLL_HIDDEN
int compose_check_flat(const char *algorithm, papcoll_schedule *out);

#endif /* PAPCOLL_ALGORITHMS_PARTS_COMPOSE_H */
