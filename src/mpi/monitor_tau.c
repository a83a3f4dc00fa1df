/* monitor_tau.c - tau (time to move and reduce one segment, Proficz 2018, Sect. 4) comes from a
 * calibration made at the monitor's first call, of auto or of any PAP-aware algorithm
 * (collective): ranks 0 and 1 ping-pong 8 bytes (latency, best of 20) and 1 MiB (best of
 * 5), and rank 0 times MPI_Reduce_local on 1 MiB of floats; rank 0 broadcasts the three
 * numbers so every rank computes the same
 *   tau = latency + segment_bytes x (seconds_per_byte + reduce_seconds_per_byte),
 * segment_bytes = ceil(count / P) x the datatype's extent (src/core/tau_model.h).
 *
 * PAPCOLL_TAU_MODEL: the same three numbers from `papcoll calibrate`, which
 * prints them from its fitted model (latency = L + o + o_r, the model's one-way small
 * message, which is what the half round trip measures; seconds_per_byte = G;
 * reduce_seconds_per_byte = gamma of its datatype), e.g.
 *   PAPCOLL_TAU_MODEL=latency=8.4e-06,seconds_per_byte=8.37e-09,reduce_seconds_per_byte=6.4e-11
 * Then nothing is timed: a measurement on a busy machine is noisy, and the calibration's
 * fit is steadier and is what `papcoll sim` predicts with, so the live tau and the
 * simulated one agree. Rank 0's setting decides (its numbers are broadcast, as measured
 * ones are: every rank must build the same schedule); empty is unset. The text must name
 * each of the three exactly once with a finite number >= 0 (papcoll_tau_model_parse); anything else
 * fails the call with MPI_ERR_ARG and a message saying what is wrong, on every rank (one
 * MPI_Allreduce agrees on it: a rank that failed alone would leave the others waiting in
 * the warm-up). The warm-up is still done: the connections need opening whatever gave tau.
 *
 * Warm-up (Proficz 2018, Sect. 3): MPI libraries may open a connection at the first message between
 * two processes (TCP between nodes). The PAP-aware algorithms use links that depend on the
 * arrival order, which changes from call to call, so at the calibration every rank
 * exchanges an empty message with every other rank on the schedule's communicator: every
 * link any later layout can use is open before the first timed call. (The paper warms up
 * at every edge; after the first time the connections stay open, so once is enough.) Not
 * in SMPI, which opens no connections (mpi_features.h). */
#include "monitor_tau.h"

#include <math.h>
#include <stdlib.h>

#include "mpi_features.h"
#include "ping_pong.h"

/* The best half round trip of `rounds` ping-pongs of `bytes` (ranks 0 and 1). */
static double best_half_round_trip(papcoll_comm *pc, char *buffer, int bytes, int rounds) {
    double best = INFINITY;
    for (int round = 0; round < rounds; round++) {
        double start = MPI_Wtime();
        ping_pong(pc->monitor.comm, buffer, bytes, MPI_BYTE,
                  monitor_tag(&pc->monitor, MONITOR_CALIBRATION_TAG), 1);
        double half = (MPI_Wtime() - start) / 2;
        /* below zero: a step of the wall clock, which MPICH's MPI_Wtime follows */
        if (half >= 0 && half < best) best = half;
    }
    return isfinite(best) ? best : 0; /* every round stepped: nothing measured */
}

/* Collective: PAPCOLL_TAU_MODEL read on every rank; *given says whether rank 0 has one.
 * Malformed text on any rank is an error on every rank. */
static int read_tau_model(papcoll_comm *pc, double model[TAU_MODEL_SIZE], int *given) {
    const char *text = getenv("PAPCOLL_TAU_MODEL");
    int set = text != NULL && text[0] != '\0';
    char why[200] = "";
    int malformed = set && papcoll_tau_model_parse(text, model, why, sizeof why) != PAPCOLL_OK;
    /* MPI_MIN of {the lowest rank with malformed text, else P; 0 if rank 0 has a model} */
    int mine[2] = {malformed ? pc->rank : pc->size, pc->rank == 0 && set ? 0 : 1};
    int agreed[2];
    int code = MPI_Allreduce(mine, agreed, 2, MPI_INT, MPI_MIN, pc->monitor.comm);
    if (code != MPI_SUCCESS)
        return record_error(code, "papcoll: agreeing on PAPCOLL_TAU_MODEL failed");
    if (malformed)
        return record_error(MPI_ERR_ARG, "papcoll: PAPCOLL_TAU_MODEL='%.80s' on rank %d: %s",
                            text, pc->rank, why);
    if (agreed[0] < pc->size)
        return record_error(MPI_ERR_ARG, "papcoll: PAPCOLL_TAU_MODEL is malformed on rank %d "
                            "(its error says how); every rank stops", agreed[0]);
    *given = agreed[1] == 0;
    return MPI_SUCCESS;
}

/* Rank 0's measured model (see the header); ranks 0 and 1 ping-pong. */
static int measure_tau_model(papcoll_comm *pc, double model[TAU_MODEL_SIZE]) {
    enum { LARGE = 1 << 20 };
    char *buffer = calloc(LARGE, 1);
    float *accumulator = calloc(LARGE / sizeof(float), sizeof(float));
    if (buffer == NULL || accumulator == NULL) {
        free(buffer);
        free(accumulator);
        return record_error(MPI_ERR_NO_MEM, "papcoll: out of memory calibrating tau");
    }
    if (pc->size > 1 && pc->rank <= 1) {
        double latency = best_half_round_trip(pc, buffer, 8, 20);
        double large = best_half_round_trip(pc, buffer, LARGE, 5);
        if (pc->rank == 0) {
            model[TAU_MODEL_LATENCY] = latency;
            model[TAU_MODEL_SECONDS_PER_BYTE] =
                large > latency ? (large - latency) / LARGE : 1e-12;
        }
    }
    if (pc->rank == 0) {
        double best = INFINITY;
        for (int round = 0; round < 5; round++) {
            double start = MPI_Wtime();
            MPI_Reduce_local(buffer, accumulator, LARGE / (int)sizeof(float), MPI_FLOAT, MPI_SUM);
            double elapsed = MPI_Wtime() - start;
            if (elapsed >= 0 && elapsed < best) best = elapsed; /* below zero: a clock step */
        }
        model[TAU_MODEL_REDUCE_SECONDS_PER_BYTE] = isfinite(best) ? best / LARGE : 0;
    }
    free(buffer);
    free(accumulator);
    return MPI_SUCCESS;
}

/* One empty message each way between every pair of ranks (see the header). Its tag may
 * also be a schedule tag on pc->comm; MPI matches messages of one sender and tag in order,
 * and each rank posts these before any schedule message. */
static int warm_up(papcoll_comm *pc) {
    if (!PAPCOLL_CONNECTIONS_OPEN_LAZILY) return MPI_SUCCESS;
    MPI_Request *requests = malloc(2 * (size_t)pc->size * sizeof *requests);
    if (requests == NULL) return record_error(MPI_ERR_NO_MEM, "papcoll: out of memory");
    int posted = 0;
    char empty = 0;
    for (int peer = 0; peer < pc->size; peer++) {
        if (peer == pc->rank) continue;
        MPI_Irecv(NULL, 0, MPI_BYTE, peer, monitor_tag(&pc->monitor, MONITOR_CALIBRATION_TAG),
                  pc->comm,
                  &requests[posted++]);
        MPI_Isend(&empty, 0, MPI_BYTE, peer, monitor_tag(&pc->monitor, MONITOR_CALIBRATION_TAG),
                  pc->comm,
                  &requests[posted++]);
    }
    int code = MPI_Waitall(posted, requests, MPI_STATUSES_IGNORE);
    free(requests);
    if (code != MPI_SUCCESS) return record_error(code, "papcoll: connection warm-up failed");
    return MPI_SUCCESS;
}

int monitor_calibrate(papcoll_comm *pc) {
    monitor_state *m = &pc->monitor;
    double model[TAU_MODEL_SIZE] = {1e-6, 1e-10, 1e-10};
    int given = 0;
    int code = read_tau_model(pc, model, &given);
    if (code != MPI_SUCCESS) return code;
    if (!given && (code = measure_tau_model(pc, model)) != MPI_SUCCESS) return code;
    code = MPI_Bcast(model, TAU_MODEL_SIZE, MPI_DOUBLE, 0, m->comm);
    if (code != MPI_SUCCESS) return record_error(code, "papcoll: calibrating tau failed");
    if ((code = warm_up(pc)) != MPI_SUCCESS) return code;
    for (int i = 0; i < TAU_MODEL_SIZE; i++) m->model[i] = model[i];
    m->calibrated = 1;
    return MPI_SUCCESS;
}
