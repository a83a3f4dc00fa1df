/* operation.c - the engine's side of one operation: the tags it holds, the settling of what
 * a failed one left in flight, and its two ends (operation.h says why there are two): the
 * engine finishing it, and MPI freeing its request. Apart from nonblocking.c, which posts
 * operations through the engine (progress.c), since the engine calls these. */
#include <assert.h>
#include <stdlib.h>

#include "operation.h"

void operation_entered(papcoll_operation *op) {
    assert(progress_engine_held());
    if (op->tag_count == 0 || op->holds_tags) return;
    op->next_holder = op->pc->tag_holders;
    op->pc->tag_holders = op;
    op->holds_tags = 1;
}

static int ranges_overlap(const papcoll_operation *a, const papcoll_operation *b) {
    return a->tag_first < b->tag_first + b->tag_count &&
           b->tag_first < a->tag_first + a->tag_count;
}

int operation_claim_tags(papcoll_operation *op) {
    assert(progress_engine_held());
    if (op->tags_claimed || op->tag_count == 0) return 1;
    for (const papcoll_operation *holder = op->pc->tag_holders; holder != NULL;
         holder = holder->next_holder)
        if (holder->place < op->place && ranges_overlap(holder, op)) {
            if (!op->tag_waited) op->pc->tag_waits++;
            op->tag_waited = 1;
            return 0;
        }
    op->tags_claimed = 1;
    return 1;
}

int operation_settle_step(papcoll_operation *op, int (*check)(MPI_Request)) {
    assert(progress_engine_held());
    int settled = op->plan == NULL || executor_settle_step(&op->run, &op->settling, check);
    /* a persistent request's start times: their receives write into its memory */
    if (op->arrival_count > 0) {
        int start_times_settled = request_settling_step(
            &op->start_times_settling, op->arrival_requests, op->arrival_count,
            op->arrival_kinds, check, &op->start_times_abandoned);
        settled = settled && start_times_settled;
    }
    return settled;
}

void operation_finished(papcoll_operation *op) {
    assert(progress_engine_held());
    if (op->holds_tags) {
        papcoll_operation **link = &op->pc->tag_holders;
        while (*link != op) link = &(*link)->next_holder;
        *link = op->next_holder;
        op->holds_tags = 0;
    }
    if (op->owner == NULL) {
        papcoll_comm *pc = op->pc;
        if (op->error != MPI_SUCCESS && op->run.posted_any)
            __atomic_store_n(&pc->nonblocking_spoiled, 1, __ATOMIC_RELEASE);
        if (op->plan != NULL && !op->plan_owned)
            __atomic_sub_fetch(&op->plan->users, 1, __ATOMIC_ACQ_REL);
        __atomic_sub_fetch(&pc->nonblocking_outstanding, 1, __ATOMIC_ACQ_REL);
    }
    op->finished_at = MPI_Wtime();
    __atomic_store_n(&op->running, 0, __ATOMIC_RELEASE);
    if (op->finished != NULL)
        op->finished(op->finished_argument, op->error,
                     op->error != MPI_SUCCESS ? op->error_text : "");
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
