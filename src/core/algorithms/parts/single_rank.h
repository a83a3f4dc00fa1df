/* single_rank.h - the all-reduce of one rank: a copy of the send buffer into the receive
 * buffer (nothing at all with MPI_IN_PLACE, where the executors skip a copy onto itself).
 * The builders whose general case needs a partner (binomial, linear, recursive_doubling,
 * rabenseifner) start with it. */
#ifndef PAPCOLL_ALGORITHMS_PARTS_SINGLE_RANK_H
#define PAPCOLL_ALGORITHMS_PARTS_SINGLE_RANK_H

#include <stdint.h>

#include "../../hidden.h"
#include "../../schedule.h"

/* With ranks == 1, appends that copy and returns 1: the builder is done and returns
 * sched_finish(out). With more ranks, appends nothing and returns 0. */
PAPCOLL_HIDDEN
int single_rank_copy(int32_t ranks, papcoll_schedule *out);

#endif /* PAPCOLL_ALGORITHMS_PARTS_SINGLE_RANK_H */
