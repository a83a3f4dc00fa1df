/* executor.h - the MPI executor: a schedule (src/core/schedule.h) prepared once as a plan,
 * and run over MPI with memory kept across calls (executor.c). It knows nothing of the
 * papcoll communicator: it is given the MPI communicator and the workspace it may use. */
#ifndef PAPCOLL_MPI_EXECUTOR_H
#define PAPCOLL_MPI_EXECUTOR_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "request_settling.h"
#include "schedule.h"

/* A schedule ready to run, kept across calls with the same shape (the common case in a
 * training loop or a benchmark): built once, with its reverse edges precomputed. */
/* What a schedule was built for: a plan is reused by a call with the same key. */
typedef struct plan_key {
    const algorithm_entry *algorithm;
    int64_t count;
    int64_t extent;
    int keep_order;            /* built for a non-commutative op */
    /* PAP-aware algorithms: the predicted arrival class (arrival_class.h), one byte per
     * rank, owned by the plan; NULL for a schedule built without arrivals */
    uint8_t *arrival_class;
    int32_t ranks;             /* entries in arrival_class */
} plan_key;

typedef struct executor_plan {
    papcoll_schedule *schedule;
    plan_key key;
    int32_t *dependent_first;  /* CSR: the ops waiting for op i are */
    int32_t *dependents;       /* dependents[dependent_first[i] .. dependent_first[i+1]) */
    int32_t *initial_pending;  /* how many ops each op waits for */
    /* per op, 1: a SEND the next SEND to the same peer waits for (sched_order_sends), of
     * synchronous_send_bytes or more; it goes as MPI_Issend, so it completes when the
     * message is taken, not when MPI has buffered it (executor.c says why) */
    uint8_t *synchronous;
    int32_t tag_count;         /* the schedule's highest tag + 1 (0: no message); a post's
                                  plan: the most over every rank's schedule (call_plan.c) */
    /* non-blocking operations running it (nonblocking.c): a cache keeps it while > 0;
     * changed with __atomic builtins, as an operation lets go in whatever thread
     * completes it */
    int32_t users;
    /* 1: built outside the cache, every cached plan being in use (call_plan.c); whoever
     * asked for it owns it and frees it (only non-blocking posts hold cached plans) */
    int32_t uncached;
} executor_plan;

/* Memory the executor reuses across calls; grows, never shrinks until the context is freed. */
typedef struct executor_workspace {
    int32_t *pending, *ready, *outstanding, *request_op, *completed_indices;
    MPI_Request *requests;
    /* per request in flight: the elements a receive expects (-1: a send); per completion:
     * its status, which says how many arrived */
    int32_t *request_elements;
    MPI_Status *statuses;
    size_t op_capacity, request_capacity;
    void *scratch;             /* every scratch buffer of the plan, back to back */
    size_t scratch_bytes;
    void *reduce_temporary;    /* for REDUCE with the target as left operand */
    size_t reduce_temporary_bytes;
    /* A run failed after posting messages: see executor_abandon() in executor.c. Its
     * communicator must not run again (peers' messages may still arrive on it), and buffers
     * MPI may still use are never freed. */
    int spoiled;
    int64_t abandoned_requests; /* requests MPI could neither cancel nor complete */
} executor_workspace;

/* The state of one run of a plan: buffers, the ready queue and the requests in flight. A
 * blocking call keeps it on the stack; a non-blocking operation (nonblocking.c) keeps it
 * with the operation until it completes. */
typedef struct executor_run {
    MPI_Comm comm;
    executor_workspace *workspace;
    const executor_plan *plan;
    char *buffers[SCHED_FIRST_SCRATCH + SCHED_MAX_SCRATCH];
    int64_t extent;
    MPI_Datatype datatype;
    MPI_Op op;
    int64_t chunk;             /* most elements per MPI message */
    int tag_offset;            /* added to every schedule tag: operations outstanding
                                  together on one communicator each get their own range */
    int32_t ready_head, ready_tail;
    int32_t active;            /* requests in flight */
    int32_t remaining;         /* ops not yet completed */
    int posted_any;            /* a message was posted: a failure spoils the communicator */
} executor_run;

/* Runs one rank's schedule over MPI on comm (the communicator's private duplicate), with
 * the memory of workspace; messages longer than max_message_elements go in pieces.
 * sendbuf may equal recvbuf (MPI_IN_PLACE). Returns MPI_SUCCESS or an MPI error class, with
 * the message recorded for papcoll_error_string. On every return none of its requests is
 * left outstanding; a failure after messages were posted sets workspace->spoiled. */
int executor_run_blocking(const executor_plan *plan, executor_workspace *workspace,
                          MPI_Comm comm, int64_t max_message_elements, const void *sendbuf,
                          void *recvbuf, MPI_Datatype datatype, MPI_Op op);

/* The same in steps, for non-blocking operations. executor_begin prepares a run (sizes the
 * workspace, queues the ops that wait for nothing) and posts nothing. executor_advance
 * starts what is ready and collects finished messages until nothing more can happen now,
 * never blocking; *done says whether the schedule finished. With request_is_complete NULL
 * it tests with MPI_Testsome (which drives MPI's progress); inside MPI's own progress engine
 * (an MPICH progress hook, progress.c) that is forbidden, and request_is_complete (MPICH's
 * MPIX_Request_is_complete) says which requests finished instead. Bounded work per call
 * (executor.c: ADVANCE_ROUNDS). A failure returns the error and leaves the requests in
 * flight to executor_settle_step. */
int executor_begin(executor_run *run, const executor_plan *plan,
                   executor_workspace *workspace, MPI_Comm comm, int64_t max_message_elements,
                   int tag_offset, const void *sendbuf, void *recvbuf, MPI_Datatype datatype,
                   MPI_Op op);
int executor_advance(executor_run *run, int (*request_is_complete)(MPI_Request), int *done);
/* After a failure: settles every request still in flight (request_settling.h) and marks
 * the workspace spoiled; only outside MPI's progress. */
void executor_abandon(executor_run *run);
/* The same in steps (request_settling_step, check as there): 1 once settled. */
int executor_settle_step(executor_run *run, request_settling *settling,
                         int (*request_is_complete)(MPI_Request));

void executor_plan_release(executor_plan *plan);
void executor_workspace_release(executor_workspace *workspace);
/* Prepares the reverse edges, pending counts, tag count of plan->schedule, and which sends
 * go as MPI_Issend: those another send waits for, of synchronous_send_bytes or more
 * (papcoll_tuning). */
int executor_plan_prepare(executor_plan *plan, int64_t synchronous_send_bytes);

#endif /* PAPCOLL_MPI_EXECUTOR_H */
