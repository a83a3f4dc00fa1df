/* rank_order.c - where a rank sits in a given rank order (rank_order.h). */
#include "rank_order.h"

#include <stdlib.h>

int32_t rank_order_position(int32_t ranks, int32_t rank, const int32_t *order,
                            papcoll_schedule *out) {
    if (order == NULL) return rank;
    unsigned char *seen = calloc((size_t)ranks, 1);
    if (seen == NULL) {
        sched_fail(out, PAPCOLL_ERR_NO_MEMORY, "out of memory checking the rank order");
        return -1;
    }
    int32_t position = -1;
    for (int32_t i = 0; i < ranks; i++) {
        int32_t listed = order[i];
        if (listed < 0 || listed >= ranks || seen[listed]) {
            free(seen);
            sched_fail(out, PAPCOLL_ERR_ARGUMENT,
                       "rank order is not a permutation of 0..%d: entry %d is %d%s", ranks - 1,
                       i, listed,
                       listed >= 0 && listed < ranks ? ", listed twice" : ", out of range");
            return -1;
        }
        seen[listed] = 1;
        if (listed == rank) position = i;
    }
    free(seen);
    return position;
}
