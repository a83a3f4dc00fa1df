/* fold.h - MPICH's fold for P not a power of two (Ruefenacht et al. 2017, Fig. 2) as the
 * builders that exchange among a power of two of ranks use it (recursive_doubling,
 * rabenseifner, priority_rabenseifner). With surplus = P - (largest power of two <= P),
 * ranks below 2 x surplus pair up as (2i, 2i+1): the even one hands its vector to the odd
 * one and gets the result back, taking no part in the exchange; the odd one reduces the
 * vector it takes in into its own first (on the left: it comes from the lower rank, which
 * keeps the operand order) and sends the result back at the end. The rank maps are
 * sched_fold_exchange_rank and sched_fold_real_rank (schedule.h). */
#ifndef PAPCOLL_ALGORITHMS_PARTS_FOLD_H
#define PAPCOLL_ALGORITHMS_PARTS_FOLD_H

#include <stdint.h>

#include "../../hidden.h"
#include "../../schedule.h"

/* Where a rank stands in the fold. */
typedef struct fold_plan {
    int32_t exchange; /* ranks in the exchange: the largest power of two <= P */
    int32_t surplus;  /* P - exchange: the number of folding pairs */
    int32_t me;       /* this rank's exchange rank (meaningless when it hands over) */
    int hands_over;   /* the even rank of a pair: fold_hand_over is its whole schedule */
    int takes_in;     /* the odd rank of a pair: fold_take_in first, the result back last */
} fold_plan;

static inline fold_plan fold_plan_of(int32_t ranks, int32_t rank) {
    fold_plan plan;
    plan.exchange = sched_floor_power_of_two(ranks);
    plan.surplus = ranks - plan.exchange;
    plan.me = sched_fold_exchange_rank(rank, plan.surplus);
    plan.hands_over = rank < 2 * plan.surplus && rank % 2 == 0;
    plan.takes_in = rank < 2 * plan.surplus && rank % 2 == 1;
    return plan;
}

/* The whole schedule of a rank that hands over: its vector to rank + 1, the result back
 * into the receive buffer, the receive after the send (with MPI_IN_PLACE both are the same
 * memory). Returns the schedule's status. */
PAPCOLL_HIDDEN
int fold_hand_over(papcoll_schedule *out, int32_t rank, int64_t count, int32_t tag);

/* The odd rank of a pair takes in rank - 1's vector: receives it into `landing` once op
 * `receive_after` is done, then reduces it on the left into `target` once also op
 * `reduce_after` is (SCHED_NONE: nothing more). Returns the reduction. */
PAPCOLL_HIDDEN
int32_t fold_take_in(papcoll_schedule *out, int32_t rank, int32_t tag, sched_region landing,
                     sched_region target, int32_t receive_after, int32_t reduce_after);

#endif /* PAPCOLL_ALGORITHMS_PARTS_FOLD_H */
