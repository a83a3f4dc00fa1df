/* internal.h - what the MPI side of papcoll shares: the communicator context and the
 * executor that runs a schedule over MPI. */
#ifndef PAPCOLL_MPI_INTERNAL_H
#define PAPCOLL_MPI_INTERNAL_H

#include <stddef.h>

#include "papcoll.h"
#include "parameters.h"
#include "schedule.h"

/* A schedule ready to run, kept across calls with the same shape (the common case in a
 * training loop or a benchmark): built once, with its reverse edges precomputed. */
typedef struct executor_plan {
    papcoll_schedule *schedule;
    const algorithm_entry *algorithm;
    int64_t count;
    int64_t extent;
    int built_from_arrivals;   /* slt/prr: built for one call's predictions, not reused */
    int keep_order;            /* built for a non-commutative op */
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

/* The arrival monitor of seed 000 S3 (monitor.c): predictions exchanged during the compute
 * phase, clock offsets, and the calibration behind tau. */
typedef struct monitor_state {
    MPI_Comm comm;             /* its own duplicate: predictions never meet schedule traffic */
    double clock_offset;       /* MPI_Wtime() + clock_offset = time on rank 0's clock */
    double begin;              /* local time of compute_begin, NAN if none this phase */
    int sent;                  /* this phase's prediction has gone out */
    double outgoing[2];        /* {prediction on rank 0's clock or NAN, call number} */
    MPI_Request *send_requests;
    int sends_in_flight;
    double *received;          /* P predictions of the current call */
    double *average;           /* HISTORY: moving average of each rank's relative arrival */
    int history_calls;         /* HISTORY: calls whose arrivals went out */
    int64_t calls;             /* PAP-aware calls so far */
    double arrival;            /* local time this rank entered the current call */
    int calibrated;
    double latency, seconds_per_byte, reduce_seconds_per_byte; /* tau's model */
    int last_predicted;        /* papcoll_last_prediction */
    double *last_arrivals;
    double last_tau;
} monitor_state;

struct papcoll_comm {
    MPI_Comm comm;             /* private duplicate: our tags never meet the user's */
    int size, rank;
    char algorithm[64];        /* "auto" or a registered name */
    owned_parameters parameters; /* the algorithms' parameters, copied from the config */
    int32_t *groups;           /* the group of every rank (hierarchical algorithms) */
    papcoll_config config;     /* the rest of the config (its parameters zeroed: see above) */
    executor_plan plan;
    executor_workspace workspace;
    monitor_state monitor;
    /* The last (datatype, op) pair found compatible (communicator.c: check_pair). */
    MPI_Datatype checked_datatype;
    MPI_Op checked_op;
};

/* monitor.c. Created with the communicator (measures clock offsets: collective); cleans up
 * after itself on failure. */
int monitor_create(papcoll_comm *pc);
void monitor_release(papcoll_comm *pc);
/* At the start of an slt or prr call (collective): gathers every rank's prediction and
 * says whether all are usable; *arrivals then points at P times in seconds after the
 * earliest (the monitor's own array, kept for papcoll_last_prediction), and tau is for a
 * segment of segment_bytes. Returns MPI_SUCCESS or an error class. */
int monitor_gather(papcoll_comm *pc, double segment_bytes, const double **arrivals,
                   double *tau, int *usable);
/* At the end of an slt or prr call: HISTORY mode sends this call's arrival to the others. */
int monitor_finish_call(papcoll_comm *pc);

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
