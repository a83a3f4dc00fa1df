/* operation.c - the two ends of an operation (operation.h says why there are two): the
 * engine finishing it, and MPI freeing its request. Apart from nonblocking.c, which posts
 * operations through the engine (progress.c), since the engine calls these. */
#include <stdlib.h>

#include "operation.h"

void operation_finished(papcoll_operation *op) {
    if (op->owner == NULL) {
        papcoll_comm *pc = op->pc;
        if (op->error != MPI_SUCCESS && op->run.posted_any)
            __atomic_store_n(&pc->nonblocking_spoiled, 1, __ATOMIC_RELEASE);
        if (op->plan != NULL) __atomic_sub_fetch(&op->plan->users, 1, __ATOMIC_ACQ_REL);
        __atomic_sub_fetch(&pc->nonblocking_outstanding, 1, __ATOMIC_ACQ_REL);
    }
    __atomic_store_n(&op->running, 0, __ATOMIC_RELEASE);
    if (op->finished != NULL) op->finished(op->finished_argument, op->error);
}

void operation_released(papcoll_operation *op) {
    __atomic_store_n(&op->held_by_mpi, 0, __ATOMIC_RELEASE);
    if (op->owner != NULL) return; /* the persistent request keeps it */
    executor_workspace_release(&op->workspace);
    free(op);
}
