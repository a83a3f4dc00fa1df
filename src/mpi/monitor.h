/* monitor.h - the arrival monitor of seed 000 S3 (monitor.c): predictions exchanged during
 * the compute phase, clock offsets, and the calibration behind tau. Its public entry points
 * (papcoll_compute_begin, papcoll_edge, ...) are in include/papcoll.h. */
#ifndef PAPCOLL_MPI_MONITOR_H
#define PAPCOLL_MPI_MONITOR_H

#include <mpi.h>
#include <stdint.h>

#include "papcoll.h"

/* The monitor's state, one per papcoll communicator. */
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

#endif /* PAPCOLL_MPI_MONITOR_H */
