/* fold.c - MPICH's fold of the surplus ranks (fold.h). */
#include "fold.h"

int fold_hand_over(papcoll_schedule *out, int32_t rank, int64_t count, int32_t tag) {
    int32_t handed_over =
        sched_send(out, rank + 1, tag, SCHED_SEND_REGION(0, count), SCHED_FIRST);
    sched_recv(out, rank + 1, tag, SCHED_RECV_REGION(0, count), SCHED_AFTER(handed_over));
    return sched_finish(out);
}

int32_t fold_take_in(papcoll_schedule *out, int32_t rank, int32_t tag, sched_region landing,
                     sched_region target, int32_t receive_after, int32_t reduce_after) {
    int32_t received = sched_recv(out, rank - 1, tag, landing, SCHED_AFTER(receive_after));
    return sched_reduce(out, landing, target, SCHED_SOURCE_LEFT,
                        SCHED_AFTER(received, reduce_after));
}
