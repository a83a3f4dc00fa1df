/* single_rank.c - the all-reduce of one rank (single_rank.h). */
#include "single_rank.h"

int single_rank_copy(int32_t ranks, papcoll_schedule *out) {
    if (ranks != 1) return 0;
    sched_copy_own_vector(out);
    return 1;
}
