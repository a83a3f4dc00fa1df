/* operation.c - the two ends of an operation (operation.h says why there are two): the
 * engine finishing it, and MPI freeing its request. Apart from nonblocking.c, which posts
 * operations through the engine (progress.c), since the engine calls these. */
#include <stdlib.h>

#include "operation.h"

int operation_claim_window(papcoll_operation *op) {
    if (op->owner != NULL || op->window_held) return 1;
    /* its turn, not only a free window: a later post of the same window visited first
     * must not take it, or ranks would run different operations in one window */
    papcoll_operation **slot = &op->pc->window_owner[op->window];
    if (*slot != NULL || op->pc->window_turn[op->window] != op->sequence) return 0;
    *slot = op;
    op->window_held = 1;
    return 1;
}

void operation_finished(papcoll_operation *op) {
    if (op->owner == NULL) {
        papcoll_comm *pc = op->pc;
        if (op->error != MPI_SUCCESS && op->run.posted_any)
            __atomic_store_n(&pc->nonblocking_spoiled, 1, __ATOMIC_RELEASE);
        if (op->plan != NULL && !op->plan_owned)
            __atomic_sub_fetch(&op->plan->users, 1, __ATOMIC_ACQ_REL);
        if (op->window_held) {
            pc->window_owner[op->window] = NULL;
            pc->window_turn[op->window] += pc->tag_windows;
        }
        op->window_held = 0;
        __atomic_sub_fetch(&pc->nonblocking_outstanding, 1, __ATOMIC_ACQ_REL);
    }
    op->finished_at = MPI_Wtime();
    __atomic_store_n(&op->running, 0, __ATOMIC_RELEASE);
    if (op->finished != NULL) op->finished(op->finished_argument, op->error);
}

void operation_released(papcoll_operation *op) {
    __atomic_store_n(&op->held_by_mpi, 0, __ATOMIC_RELEASE);
    if (op->owner != NULL) return; /* the persistent request keeps it */
    if (op->plan_owned) {
        executor_plan_release(op->plan);
        free(op->plan);
    }
    executor_workspace_release(&op->workspace);
    free(op);
}
