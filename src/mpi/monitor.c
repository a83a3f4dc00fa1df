/* monitor.c - the arrival monitor of Proficz 2018, Sect. 3 (Fig. 3-4), its owner: each rank predicts
 * when it will reach the next all-reduce and tells the others while they all still compute,
 * so auto and the PAP-aware algorithms (slt, prr, straggler) can lay out their schedules by
 * arrival. This file makes and frees the monitor, takes the program's predictions
 * (papcoll_compute_begin, papcoll_edge, papcoll_predict_arrival) and, at each call, turns
 * what its source gathered into the P arrivals every rank agrees on. Its parts:
 *   monitor_source.h     where arrivals come from (EDGE, HISTORY, AUTOMATIC), one source
 *                        chosen when the monitor is made;
 *   monitor_messages.c   the one-message-per-rank round the sources send through;
 *   monitor_tau.c        tau's calibration and the links' warm-up (model: core tau_model.h);
 *   clock_offsets.c      every rank's clock put on rank 0's (shared with papcoll-bench).
 *
 * How predictions travel. The paper uses a monitoring thread per process. We use no
 * thread: papcoll_edge() sends the prediction at once, with MPI_Isend of two doubles to
 * every other rank on the monitor's own communicator. Messages that small go eagerly: they
 * reach the receiver's queue without the sender calling MPI again, so a late rank's
 * prediction is there when the early ones reach the all-reduce, although the late rank
 * still computes. (A non-blocking collective would not do: it needs every rank to drive its
 * progress.) The all-reduce then receives one message from every rank.
 *
 * Every rank must build the same schedule, whatever any rank does: each source leaves the
 * same P values on every rank, and monitor_gather takes the same decision from them
 * everywhere (all finite and within an hour of each other, else the ring).
 *
 * Clocks: at creation rank 0 ping-pongs with every rank (clock_offsets.h); all predictions
 * are put on rank 0's clock; MPI_WTIME_IS_GLOBAL is not assumed. A communicator whose ranks
 * all hold their world's offsets (world_reference.h: measured once, at the world's papcoll
 * communicator) puts them on world rank 0's clock instead, without measuring: only
 * differences between ranks' times are used, so any one common clock serves.
 *
 * Not done: a monitor thread, for MPI libraries that do not send small messages eagerly.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock_offsets.h"
#include "world_reference.h"
#include "internal.h"
#include "monitor_messages.h"
#include "monitor_source.h"
#include "monitor_tau.h"

const monitor_source *monitor_source_for(papcoll_arrival_source source) {
    switch (source) {
    case PAPCOLL_ARRIVALS_EDGE: return &monitor_source_edge;
    case PAPCOLL_ARRIVALS_HISTORY: return &monitor_source_history;
    default: return &monitor_source_automatic;
    }
}

/* Frees the monitor's memory and communicator without draining any messages. */
static void monitor_free(monitor_state *m) {
    if (m->comm != MPI_COMM_NULL && !m->shares_communicator) MPI_Comm_free(&m->comm);
    free(m->send_requests);
    free(m->received);
    free(m->average);
    free(m->last_arrivals);
    free(m->period_waits);
    free(m->period_outgoing);
    free(m->period_incoming);
    free(m->period_requests);
    free(m->receives);
    free(m->incoming_predictions);
    free(m->lateness);
    free(m->recent_lateness);
    memset(m, 0, sizeof *m);
    m->comm = MPI_COMM_NULL;
}

/* On failure cleans up after itself (no collective calls: other ranks may have succeeded). */
int monitor_create(papcoll_comm *pc) {
    int code = MPI_SUCCESS;
    monitor_state *m = &pc->monitor;
    memset(m, 0, sizeof *m);
    m->comm = MPI_COMM_NULL;
    m->source = monitor_source_for(pc->config.arrival_source);
    m->begin = NAN;
    size_t ranks = (size_t)pc->size;
    m->send_requests = malloc(ranks * sizeof *m->send_requests);
    m->received = calloc(ranks, sizeof *m->received);
    m->average = calloc(ranks, sizeof *m->average);
    m->last_arrivals = calloc(ranks, sizeof *m->last_arrivals);
    m->period_waits = calloc(MONITOR_PERIOD_MOST, sizeof *m->period_waits);
    m->period_outgoing = calloc(MONITOR_PERIOD_DOUBLES, sizeof *m->period_outgoing);
    m->period_incoming = calloc(ranks * MONITOR_PERIOD_DOUBLES, sizeof *m->period_incoming);
    m->period_requests = malloc(ranks * sizeof *m->period_requests);
    m->receives = malloc(ranks * sizeof *m->receives);
    m->incoming_predictions = calloc(2 * ranks, sizeof *m->incoming_predictions);
    m->lateness = calloc(ranks, sizeof *m->lateness);
    m->recent_lateness = calloc(2 * ranks, sizeof *m->recent_lateness);
    m->period_length = 1;
    m->period_all_edge = 1;
    m->call_tag = MONITOR_NO_TAG;
    if (!m->send_requests || !m->received || !m->average || !m->last_arrivals ||
        !m->period_waits || !m->period_outgoing || !m->period_incoming ||
        !m->period_requests || !m->receives || !m->incoming_predictions || !m->lateness || !m->recent_lateness) {
        code = record_error(MPI_ERR_NO_MEM, "papcoll_comm_create: out of memory (monitor)");
    } else if (pc->shares_tag_space) { /* window 1 of pc->comm (communicator.c) */
        m->comm = pc->comm;
        m->shares_communicator = 1;
        m->tag_base = SCHED_MAX_TAG + 1;
    } else if ((code = MPI_Comm_dup(pc->comm, &m->comm)) != MPI_SUCCESS) {
        m->comm = MPI_COMM_NULL;
        code = record_error(code, "papcoll_comm_create: MPI_Comm_dup failed (monitor)");
    }
    if (code == MPI_SUCCESS) MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
    if (code == MPI_SUCCESS && pc->shares_world_reference) {
        /* on world rank 0's clock, measured once at the world's communicator */
        m->clock_offset = world_reference_clock_offset();
    } else if (code == MPI_SUCCESS) {
        code = clock_offsets_measure(m->comm, monitor_tag(m, MONITOR_CLOCK_TAG),
                                     &m->clock_offset, NULL, NULL);
        if (code != MPI_SUCCESS)
            code = record_error(code, "papcoll_comm_create: measuring clock offsets failed");
        else if (world_reference_is_world(m->comm))
            world_reference_set_clock_offset(m->clock_offset);
    }
    if (code != MPI_SUCCESS) monitor_free(m);
    return code;
}

void monitor_release(papcoll_comm *pc) {
    monitor_state *m = &pc->monitor;
    if (m->comm != MPI_COMM_NULL) {
        /* Messages nobody received would make MPI_Comm_free fail (MPICH checks): take them. */
        m->source->drain(pc);
        monitor_wait_for_sends(m);
    }
    monitor_free(m);
}

/* ---- the compute phase: local calls ------------------------------------------------------ */

/* The prediction of this phase, on the local clock, or NaN with an error. */
static int predict(papcoll_comm *pc, double local_prediction, const char *refused) {
    monitor_state *m = &pc->monitor;
    double now = MPI_Wtime();
    int valid = refused == NULL && isfinite(local_prediction) &&
                local_prediction <= now + MONITOR_MOST_SECONDS_AHEAD &&
                (isnan(m->begin) || local_prediction >= m->begin);
    /* a source may ignore predictions, and only the first prediction of a phase counts (and
     * is sent, where predictions travel at once); a bad argument is still reported */
    int first = m->source->takes_predictions && !m->sent;
    if (first) {
        m->used_edge = valid;
        double value = valid ? local_prediction + m->clock_offset : NAN;
        int code = MPI_SUCCESS;
        if (m->source->sends_at_once(pc))
            code = monitor_send_to_all(pc, value, (double)m->calls);
        else if ((code = monitor_wait_for_sends(m)) == MPI_SUCCESS) /* buffer free again */
            m->outgoing[0] = value;
        m->sent = 1;
        if (code != MPI_SUCCESS) return code;
    }
    if (valid) return MPI_SUCCESS;
    return record_error(MPI_ERR_ARG, "papcoll: %s; %s",
                        refused ? refused
                                : "the predicted arrival is not finite, before the compute "
                                  "phase began, or more than an hour ahead",
                        first ? "the next call runs without this phase's predictions on every "
                                "rank"
                              : "ignored (this phase's prediction was already made)");
}

int papcoll_compute_begin(papcoll_comm *pc) {
    if (pc == NULL) return record_error(MPI_ERR_ARG, "papcoll_compute_begin: pc is NULL");
    pc->monitor.begin = MPI_Wtime();
    return MPI_SUCCESS;
}

int papcoll_edge(papcoll_comm *pc, double fraction) {
    if (pc == NULL) return record_error(MPI_ERR_ARG, "papcoll_edge: pc is NULL");
    monitor_state *m = &pc->monitor;
    if (!(fraction > 0 && fraction <= 1)) {
        char reason[96];
        snprintf(reason, sizeof reason, "papcoll_edge: fraction %g is not in (0, 1]",
                 fraction);
        return predict(pc, NAN, reason);
    }
    if (isnan(m->begin))
        return predict(pc, NAN, "papcoll_edge: called before papcoll_compute_begin");
    double now = MPI_Wtime();
    return predict(pc, m->begin + (now - m->begin) / fraction, NULL);
}

int papcoll_predict_arrival(papcoll_comm *pc, double seconds) {
    if (pc == NULL) return record_error(MPI_ERR_ARG, "papcoll_predict_arrival: pc is NULL");
    if (!(seconds >= 0 && seconds <= MONITOR_MOST_SECONDS_AHEAD))
        return predict(pc, NAN, "papcoll_predict_arrival: seconds must be in [0, 3600]");
    return predict(pc, MPI_Wtime() + seconds, NULL);
}

int papcoll_last_prediction(const papcoll_comm *pc, int *predicted, double *arrivals,
                            double *tau) {
    if (pc == NULL) return record_error(MPI_ERR_ARG, "papcoll_last_prediction: pc is NULL");
    if (predicted) *predicted = pc->monitor.last_predicted;
    if (arrivals)
        memcpy(arrivals, pc->monitor.last_arrivals, (size_t)pc->size * sizeof *arrivals);
    if (tau) *tau = pc->monitor.last_tau;
    return MPI_SUCCESS;
}

/* ---- at the collective ------------------------------------------------------------------- */

int monitor_gather(papcoll_comm *pc, double segment_bytes, const double **arrivals,
                   double *tau, int *usable) {
    monitor_state *m = &pc->monitor;
    m->arrival = MPI_Wtime();
    int code;
    if (!m->calibrated && (code = monitor_calibrate(pc)) != MPI_SUCCESS) return code;
    *tau = monitor_tau(pc, segment_bytes);
    if ((code = m->source->gather(pc, usable)) != MPI_SUCCESS) return code;
    monitor_own_work_done(pc);
    m->calls++;
    m->sent = 0;
    m->begin = NAN;
    /* The same P numbers on every rank, so the same decision everywhere. */
    double earliest = INFINITY, latest = -INFINITY;
    for (int r = 0; r < pc->size && *usable; r++) {
        if (!isfinite(m->received[r])) *usable = 0;
        earliest = fmin(earliest, m->received[r]);
        latest = fmax(latest, m->received[r]);
    }
    if (*usable && latest - earliest > MONITOR_MOST_SECONDS_AHEAD) *usable = 0;
    for (int r = 0; r < pc->size; r++)
        m->last_arrivals[r] = *usable ? m->received[r] - earliest : 0;
    *arrivals = m->last_arrivals;
    m->last_predicted = *usable;
    m->last_tau = *tau;
    return MPI_SUCCESS;
}

void monitor_own_work_done(papcoll_comm *pc) {
    pc->monitor.ready = MPI_Wtime();
    pc->monitor.own_before_seconds = pc->monitor.ready - pc->monitor.arrival;
}

int papcoll_last_own_seconds(const papcoll_comm *pc, double *before, double *after) {
    if (pc == NULL) return record_error(MPI_ERR_ARG, "papcoll_last_own_seconds: pc is NULL");
    if (before) *before = pc->monitor.own_before_seconds;
    if (after) *after = pc->monitor.own_after_seconds;
    return MPI_SUCCESS;
}

int monitor_finish_call(papcoll_comm *pc) {
    double began = MPI_Wtime();
    int code = pc->monitor.source->finish_call(pc);
    pc->monitor.call_tag = MONITOR_NO_TAG;
    pc->monitor.own_after_seconds = MPI_Wtime() - began;
    return code;
}

void monitor_tag_call(papcoll_comm *pc, monitor_call_tag tag) { pc->monitor.call_tag = tag; }

void monitor_call_built_on_arrivals(papcoll_comm *pc) {
    pc->monitor.period_built_on_arrivals = 1;
}

int monitor_measures_calls(const papcoll_comm *pc) { return pc->monitor.source->measures_calls; }

int monitor_take_observations(papcoll_comm *pc, const monitor_call_tag **tags,
                              const double **seconds) {
    monitor_state *m = &pc->monitor;
    int count = m->observed_count;
    *tags = m->observed_tags;
    *seconds = m->observed;
    m->observed_count = 0;
    return count;
}

int monitor_learnt_arrivals(const papcoll_comm *pc, double *arrivals) {
    const monitor_state *m = &pc->monitor;
    return m->calibrated && m->source->learnt_arrivals != NULL &&
           m->source->learnt_arrivals(pc, arrivals);
}

double monitor_tau(const papcoll_comm *pc, double segment_bytes) {
    return papcoll_tau_model_tau(pc->monitor.model, segment_bytes);
}

int monitor_model(const papcoll_comm *pc, double *latency, double *seconds_per_byte,
                  double *reduce_seconds_per_byte) {
    const monitor_state *m = &pc->monitor;
    *latency = m->model[TAU_MODEL_LATENCY];
    *seconds_per_byte = m->model[TAU_MODEL_SECONDS_PER_BYTE];
    *reduce_seconds_per_byte = m->model[TAU_MODEL_REDUCE_SECONDS_PER_BYTE];
    return m->calibrated;
}
