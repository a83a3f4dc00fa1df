/* internal.h - what the MPI side of papcoll shares: the communicator context and the
 * executor that runs a schedule over MPI. */
#ifndef PAPCOLL_MPI_INTERNAL_H
#define PAPCOLL_MPI_INTERNAL_H

#include <stddef.h>

#include "papcoll.h"
#include "schedule.h"

/* A schedule ready to run, kept across calls with the same shape (the common case in a
 * training loop or a benchmark): built once, with its reverse edges precomputed. */
typedef struct executor_plan {
    papcoll_schedule *schedule;
    const algorithm_entry *algorithm;
    int64_t count;
    int64_t extent;
    int32_t *dependent_first;  /* CSR: the ops waiting for op i are */
    int32_t *dependents;       /* dependents[dependent_first[i] .. dependent_first[i+1]) */
    int32_t *initial_pending;  /* how many ops each op waits for */
} executor_plan;

/* Memory the executor reuses across calls; grows, never shrinks until the context is freed. */
typedef struct executor_workspace {
    int32_t *pending, *ready, *outstanding, *request_op, *completed_indices;
    MPI_Request *requests;
    size_t op_capacity, request_capacity;
    void *scratch;             /* every scratch buffer of the plan, back to back */
    size_t scratch_bytes;
    void *reduce_temporary;    /* for REDUCE with the target as left operand */
    size_t reduce_temporary_bytes;
} executor_workspace;

struct papcoll_comm {
    MPI_Comm comm;             /* private duplicate: our tags never meet the user's */
    int size, rank;
    char algorithm[64];        /* "auto" or a registered name */
    papcoll_config config;
    executor_plan plan;
    executor_workspace workspace;
};

/* Runs one rank's schedule over MPI. sendbuf may equal recvbuf (MPI_IN_PLACE). Returns
 * MPI_SUCCESS or an MPI error class, with the message recorded for papcoll_error_string. */
int executor_run(papcoll_comm *pc, const executor_plan *plan, const void *sendbuf,
                 void *recvbuf, MPI_Datatype datatype, MPI_Op op);

void executor_plan_release(executor_plan *plan);
void executor_workspace_release(executor_workspace *workspace);
/* Prepares the reverse edges and pending counts of plan->schedule. */
int executor_plan_prepare(executor_plan *plan);

/* Records the message of an error for papcoll_error_string; returns code. */
int record_error(int code, const char *format, ...) __attribute__((format(printf, 2, 3)));

#endif
