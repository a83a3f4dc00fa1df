/* request_settling.c - after a failure, no request of the failed all-reduce may stay
 * outstanding, or freeing its memory would free what a receive still writes into. Every
 * receive left is cancelled and then completed; MPI promises that a cancelled request
 * completes without the other side (MPI-4.1 3.8.4), but some MPI libraries cannot cancel a
 * send already started, so the wait is bounded (SETTLE_SECONDS): what is still in flight
 * then is freed with MPI_Request_free (MPI completes it in the background), and the caller
 * hands the buffers it may touch over to it for good (never frees them).
 *
 * Receives only are cancelled: cancelling a send is deprecated (MPI-4.1 3.8.4) and crashed
 * MPICH's UCX layer (SIGSEGV in ucp_request_cancel) on a send whose peer had failed.
 *
 * In steps, because a failure may be found inside MPICH's progress hook (progress.c), where
 * nothing may wait, cancel or drive MPI's progress again: there a step only looks at the
 * requests (MPIX_Request_is_complete) and completes the finished ones; the cancels and
 * tests happen at the next step papcoll's own poll, call or thread makes. A program that
 * completes its requests only through MPI_Wait still gets its error: past the deadline
 * the hook's step frees what is left (a local call) and the operation finishes. */
#define _POSIX_C_SOURCE 200809L /* sched_yield */
#include <assert.h>
#include <sched.h>

#include "request_settling.h"

enum { SETTLE_SECONDS = 1 };

static _Thread_local int inside_hook;

void request_settling_inside_hook(int inside) { inside_hook = inside; }

int request_settling_step(request_settling *settling, MPI_Request *requests, int count,
                          const int32_t *elements, int (*check)(MPI_Request),
                          int64_t *abandoned) {
    assert(check != NULL || !inside_hook); /* cancels and tests only outside the hook */
    if (settling->deadline == 0) settling->deadline = MPI_Wtime() + SETTLE_SECONDS;
    if (check == NULL && !settling->cancelled) {
        for (int r = 0; r < count; r++)
            if (requests[r] != MPI_REQUEST_NULL && elements[r] >= 0) MPI_Cancel(&requests[r]);
        settling->cancelled = 1;
    }
    int past_deadline = MPI_Wtime() >= settling->deadline, left = 0;
    for (int r = 0; r < count; r++) {
        if (requests[r] == MPI_REQUEST_NULL) continue;
        int finished = 0;
        /* a request that failed is complete too (MPI_Test freed it) */
        if (check == NULL || check(requests[r]))
            MPI_Test(&requests[r], &finished, MPI_STATUS_IGNORE);
        if (requests[r] == MPI_REQUEST_NULL || finished) continue;
        if (past_deadline) {
            MPI_Request_free(&requests[r]);
            ++*abandoned;
        } else {
            left++;
        }
    }
    return left == 0;
}

void request_settling_finish(MPI_Request *requests, int count, const int32_t *elements,
                             int64_t *abandoned) {
    request_settling settling = {0, 0};
    while (!request_settling_step(&settling, requests, count, elements, NULL, abandoned))
        sched_yield();
}
