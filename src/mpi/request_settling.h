/* request_settling.h - the one clean-up of MPI requests left in flight by a failed
 * all-reduce (a blocking call's, a non-blocking operation's, a persistent request's start
 * times): request_settling.c says how. */
#ifndef PAPCOLL_MPI_REQUEST_SETTLING_H
#define PAPCOLL_MPI_REQUEST_SETTLING_H

#include <mpi.h>
#include <stdint.h>

typedef struct request_settling {
    double deadline;           /* 0: not begun */
    int cancelled;             /* the receives were cancelled (outside MPI's progress) */
} request_settling;

/* One step over requests[0 .. count) (MPI_REQUEST_NULL ones are settled); elements[i] >= 0
 * marks a receive, < 0 a send. With check NULL (papcoll's own poll, thread or call) it
 * cancels the receives once and tests every request; with check given (inside MPICH's
 * progress hook) it only looks (check) and completes finished requests, never cancelling,
 * never testing one that is not complete, never waiting. Past the deadline what is left is
 * freed to MPI and counted in *abandoned. 1 once every request is settled. */
int request_settling_step(request_settling *settling, MPI_Request *requests, int count,
                          const int32_t *elements, int (*check)(MPI_Request),
                          int64_t *abandoned);
/* Whether this thread is inside a progress hook of MPI's that may not drive MPI's progress
 * again (MPICH's; progress.c says so around it): a step that cancels or tests there is a
 * defect, and a debug build asserts it. Open MPI's callback may test and cancel
 * (progress_hook.c), so there the step settles as in papcoll's own poll. */
void request_settling_inside_hook(int inside);

/* Every step to the end, yielding between them (bounded by the deadline): only outside
 * MPI's progress. */
void request_settling_finish(MPI_Request *requests, int count, const int32_t *elements,
                             int64_t *abandoned);

#endif /* PAPCOLL_MPI_REQUEST_SETTLING_H */
