/* halving.h - reduce-scatter by recursive vector halving, naive or priority-aware (Gavahi),
 * shared by rs_halving.c, priority_rs.c and priority_rabenseifner.c, and the whole
 * reduce-scatter of the first two. */
#ifndef PAPCOLL_ALGORITHMS_PARTS_HALVING_H
#define PAPCOLL_ALGORITHMS_PARTS_HALVING_H

#include <stdint.h>

#include "../../hidden.h"
#include "../../schedule.h"

/* One round: the partner (exchange rank) and the blocks kept and sent, `length` each. */
typedef struct halving_round {
    int32_t partner, kept, sent, length;
} halving_round;

/* What the reduce-scatter leaves behind for an all-gather to follow. */
typedef struct halving_state {
    int32_t *block_written; /* per block: the last op writing it in the receive buffer */
    int32_t *block_read;    /* per block: the op that sent it away (SCHED_NONE if kept) */
    halving_round rounds[31];
    int32_t round_count;
} halving_state;

/* The block exchange rank `me` ends with: bitreverse(me) over log2(exchange) bits. */
PAPCOLL_HIDDEN
int32_t halving_final_block(int32_t me, int32_t exchange);

/* Appends the reduce-scatter of exchange rank `me` among `exchange` ranks (a power of two;
 * real_ranks[e] is exchange rank e's rank) on the receive buffer, which holds this rank's
 * vector once op `start` is done. The vector is cut into `exchange` near-equal blocks;
 * exchange rank e ends with block halving_final_block(e) reduced over all. Partners go from
 * distance 1 up to exchange/2 (distance doubling); each round hands the partner half of the
 * blocks both work on, the half that holds its final block. naive (priority 0): one message per round, one reduction of the kept half
 * after it arrives (Gavahi, Algorithm 1). priority 1: one message per block, each block
 * reduced as soon as it arrives, blocks ordered by how soon they leave again (Gavahi,
 * Algorithm 2). Scratch: one buffer of the first round's kept half (count / 2 elements,
 * rounded up to whole blocks), the same for both. Returns 0 on failure (sticky in out). */
PAPCOLL_HIDDEN
int halving_reduce_scatter(papcoll_schedule *out, int32_t exchange, int32_t me,
                           const int32_t *real_ranks, int64_t count, int32_t start,
                           int priority, halving_state *state);

PAPCOLL_HIDDEN
void halving_state_free(halving_state *state);

/* The whole reduce-scatter of rs_halving (priority 0) and priority_rs (priority 1): rank
 * `rank` among `ranks` (a power of two, else PAPCOLL_ERR_UNSUPPORTED) copies its vector to
 * the receive buffer, runs halving_reduce_scatter and ends with block bitreverse(rank),
 * which it declares as its result. Returns the schedule's status. */
PAPCOLL_HIDDEN
int reduce_scatter_build(int32_t ranks, int32_t rank, int64_t count, int priority,
                         papcoll_schedule *out);

#endif /* PAPCOLL_ALGORITHMS_PARTS_HALVING_H */
