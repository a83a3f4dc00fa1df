/* monitor.c - the arrival monitor of seed 000 S3 (Fig. 3-4): each rank predicts when it
 * will reach the next all-reduce and tells the others while they all still compute, so
 * auto and the PAP-aware algorithms (slt, prr, straggler) can lay out their schedules by
 * arrival. Three sources (papcoll.h: papcoll_arrival_source): EDGE and HISTORY below, and
 * AUTOMATIC (the default) at receive_period / end_period_call.
 *
 * How predictions travel. The paper uses a monitoring thread per process. We use no
 * thread: papcoll_edge() sends the prediction at once, with MPI_Isend of two doubles to
 * every other rank on the monitor's own communicator. Messages that small go eagerly: they
 * reach the receiver's queue without the sender calling MPI again, so a late rank's
 * prediction is there when the early ones reach the all-reduce, although the late rank
 * still computes. (A non-blocking collective would not do: it needs every rank to drive its
 * progress.) The all-reduce then receives one message from every rank.
 *
 * Every rank must build the same schedule, whatever any rank does. The protocol: before
 * each slt or prr call, every rank sends exactly one message to every other rank: at its
 * first edge() of the compute phase, else on entering the call; a refused or missing
 * prediction travels as NaN. Everyone then holds the same P values and takes the same
 * decision: all finite and within an hour of each other -> predictions; else the ring
 * (prr and slt with equal arrivals are the ring and the linear tree; we take the plain
 * ring for a fallback). A second edge() in one phase is ignored. The message carries the
 * call number, so a desynchronised program is reported instead of mixing calls.
 *
 * HISTORY mode (programs without edge()): after each slt or prr call every rank sends the
 * time it entered the call; before the next call each rank receives those P values, and
 * the prediction of rank i is a moving average (weight 1/2) of its arrival minus the
 * earliest arrival of the same call. The first call has no history and runs the ring.
 *
 * Clocks: at creation rank 0 ping-pongs 8 times with every rank and keeps the exchange
 * with the shortest round trip: offset_r = (t_send + t_receive) / 2 - t_r. All
 * predictions are put on rank 0's clock; MPI_WTIME_IS_GLOBAL is not assumed.
 *
 * tau (time to move and reduce one segment, seed 000 S4) comes from a calibration made at
 * the first slt/prr call (collective): ranks 0 and 1 ping-pong 8 bytes (latency, best of
 * 20) and 1 MiB (best of 5), and rank 0 times MPI_Reduce_local on 1 MiB of floats;
 * rank 0 broadcasts the three numbers so every rank computes the same
 *   tau = latency + segment_bytes x (seconds_per_byte + reduce_seconds_per_byte),
 * segment_bytes = ceil(count / P) x the datatype's extent.
 *
 * PAPCOLL_TAU_MODEL (issue 19): the same three numbers from `papcoll calibrate`, which
 * prints them from its fitted model (latency = L + o + o_r, the model's one-way small
 * message, which is what the half round trip measures; seconds_per_byte = G;
 * reduce_seconds_per_byte = gamma of its datatype), e.g.
 *   PAPCOLL_TAU_MODEL=latency=8.4e-06,seconds_per_byte=8.37e-09,reduce_seconds_per_byte=6.4e-11
 * Then nothing is timed: a measurement on a busy machine is noisy, and the calibration's
 * fit is steadier and is what `papcoll sim` predicts with, so the live tau and the
 * simulated one agree. Rank 0's setting decides (its numbers are broadcast, as measured
 * ones are: every rank must build the same schedule); empty is unset. The text must name
 * each of the three exactly once with a finite number >= 0; anything else fails the call
 * with MPI_ERR_ARG and a message saying what is wrong, on every rank (one MPI_Allreduce
 * agrees on it: a rank that failed alone would leave the others waiting in the warm-up).
 * The warm-up below is still done: the connections need opening whatever gave tau.
 *
 * Warm-up (seed 000 S3): MPI libraries may open a connection at the first message between
 * two processes (TCP between nodes). slt and prr use links that depend on the arrival
 * order, which changes from call to call, so at the calibration every rank exchanges an
 * empty message with every other rank on the schedule's communicator: every link any
 * later layout can use is open before the first timed call. (The paper warms up at every
 * edge; after the first time the connections stay open, so once is enough.)
 *
 * Not done: a monitor thread, for MPI libraries that do not send small messages eagerly.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrival_class.h"
#include "internal.h"

enum {
    PREDICTION_TAG = 1,
    CALIBRATION_TAG = 2,
    CLOCK_TAG = 3,
    PERIOD_TAG = 4,
    CLOCK_ROUNDS = 8,
};

/* Where a period's message keeps its three numbers after the waits. */
enum { PERIOD_ALL_EDGE = MONITOR_PERIOD_MOST, PERIOD_CALLS, PERIOD_NUMBER };

/* AUTOMATIC turns per-call predictions on only where arrivals were spread by more than
 * this share of the call's own time, and by more than scheduling jitter
 * (ARRIVAL_JITTER_SECONDS): below it a prediction could gain little, and its message round
 * would be a tax on every call. */
static const double edge_worth_spread = 0.25;

/* Predictions further ahead than this (or spread wider) are taken for nonsense. */
static const double most_seconds_ahead = 3600.0;

static int measure_clock_offset(papcoll_comm *pc) {
    monitor_state *m = &pc->monitor;
    m->clock_offset = 0;
    for (int peer = 1; peer < pc->size; peer++) {
        if (pc->rank == 0) {
            double best_round_trip = INFINITY, offset = 0, remote;
            for (int round = 0; round < CLOCK_ROUNDS; round++) {
                double sent = MPI_Wtime();
                MPI_Send(&sent, 1, MPI_DOUBLE, peer, CLOCK_TAG, m->comm);
                int code = MPI_Recv(&remote, 1, MPI_DOUBLE, peer, CLOCK_TAG, m->comm,
                                    MPI_STATUS_IGNORE);
                if (code != MPI_SUCCESS) return code;
                double received = MPI_Wtime();
                if (received - sent < best_round_trip) {
                    best_round_trip = received - sent;
                    offset = (sent + received) / 2 - remote;
                }
            }
            MPI_Send(&offset, 1, MPI_DOUBLE, peer, CLOCK_TAG, m->comm);
        } else if (pc->rank == peer) {
            double ignored, now;
            for (int round = 0; round < CLOCK_ROUNDS; round++) {
                int code = MPI_Recv(&ignored, 1, MPI_DOUBLE, 0, CLOCK_TAG, m->comm,
                                    MPI_STATUS_IGNORE);
                if (code != MPI_SUCCESS) return code;
                now = MPI_Wtime();
                MPI_Send(&now, 1, MPI_DOUBLE, 0, CLOCK_TAG, m->comm);
            }
            int code = MPI_Recv(&m->clock_offset, 1, MPI_DOUBLE, 0, CLOCK_TAG, m->comm,
                                MPI_STATUS_IGNORE);
            if (code != MPI_SUCCESS) return code;
        }
    }
    return MPI_SUCCESS;
}

/* Frees the monitor's memory and communicator without draining any messages. */
static void monitor_free(monitor_state *m) {
    if (m->comm != MPI_COMM_NULL) MPI_Comm_free(&m->comm);
    free(m->send_requests);
    free(m->received);
    free(m->average);
    free(m->last_arrivals);
    free(m->period_waits);
    free(m->period_outgoing);
    free(m->period_incoming);
    free(m->period_requests);
    free(m->lateness);
    memset(m, 0, sizeof *m);
    m->comm = MPI_COMM_NULL;
}

/* On failure cleans up after itself (no collective calls: other ranks may have succeeded). */
int monitor_create(papcoll_comm *pc) {
    int code = MPI_SUCCESS;
    monitor_state *m = &pc->monitor;
    memset(m, 0, sizeof *m);
    m->comm = MPI_COMM_NULL;
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
    m->lateness = calloc(ranks, sizeof *m->lateness);
    m->period_length = 1;
    m->period_all_edge = 1;
    if (!m->send_requests || !m->received || !m->average || !m->last_arrivals ||
        !m->period_waits || !m->period_outgoing || !m->period_incoming ||
        !m->period_requests || !m->lateness) {
        code = record_error(MPI_ERR_NO_MEM, "papcoll_comm_create: out of memory (monitor)");
    } else if ((code = MPI_Comm_dup(pc->comm, &m->comm)) != MPI_SUCCESS) {
        m->comm = MPI_COMM_NULL;
        code = record_error(code, "papcoll_comm_create: MPI_Comm_dup failed (monitor)");
    } else {
        MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
        if ((code = measure_clock_offset(pc)) != MPI_SUCCESS)
            code = record_error(code, "papcoll_comm_create: measuring clock offsets failed");
    }
    if (code != MPI_SUCCESS) monitor_free(m);
    return code;
}

static int wait_for_sends(monitor_state *m) {
    int code = MPI_Waitall(m->sends_in_flight, m->send_requests, MPI_STATUSES_IGNORE);
    m->sends_in_flight = 0;
    return code;
}

/* Sends {value, stamp} to every other rank: this phase's message. */
static int send_to_all(papcoll_comm *pc, double value, double stamp) {
    monitor_state *m = &pc->monitor;
    int code = wait_for_sends(m); /* the buffer below is still theirs until then */
    if (code != MPI_SUCCESS) return record_error(code, "papcoll: monitor send failed");
    m->outgoing[0] = value;
    m->outgoing[1] = stamp;
    for (int peer = 0; peer < pc->size; peer++) {
        if (peer == pc->rank) continue;
        code = MPI_Isend(m->outgoing, 2, MPI_DOUBLE, peer, PREDICTION_TAG, m->comm,
                         &m->send_requests[m->sends_in_flight++]);
        if (code != MPI_SUCCESS) return record_error(code, "papcoll: monitor send failed");
    }
    return MPI_SUCCESS;
}

/* Receives one {value, stamp} from every other rank into received[]; checks the stamps. */
static int receive_from_all(papcoll_comm *pc, double expected_stamp) {
    monitor_state *m = &pc->monitor;
    for (int peer = 0; peer < pc->size; peer++) {
        if (peer == pc->rank) continue;
        double message[2];
        int code = MPI_Recv(message, 2, MPI_DOUBLE, peer, PREDICTION_TAG, m->comm,
                            MPI_STATUS_IGNORE);
        if (code != MPI_SUCCESS) return record_error(code, "papcoll: monitor receive failed");
        if (message[1] != expected_stamp)
            return record_error(MPI_ERR_INTERN,
                                "papcoll: rank %d sent its prediction for slt/prr call %.0f "
                                "while rank %d is at call %.0f: the ranks do not make the "
                                "same sequence of calls on this communicator",
                                peer, message[1], pc->rank, expected_stamp);
        m->received[peer] = message[0];
    }
    return MPI_SUCCESS;
}

/* Whether an edge() sends its prediction at once: EDGE always, AUTOMATIC in its edge mode
 * (the same on every rank). */
static int sends_predictions(const papcoll_comm *pc) {
    return pc->config.arrival_source == PAPCOLL_ARRIVALS_EDGE ||
           (pc->config.arrival_source == PAPCOLL_ARRIVALS_AUTOMATIC && pc->monitor.edge_mode);
}

/* AUTOMATIC: receives the period's message of every other rank and derives, from the P x K
 * waits, the pattern every rank then holds alike: in call k the rank that waited longest
 * arrived first, so rank r arrived max_j wait[j][k] - wait[r][k] after it. */
static int receive_period(papcoll_comm *pc) {
    monitor_state *m = &pc->monitor;
    m->period_pending = 0;
    double *incoming = m->period_incoming;
    for (int peer = 0; peer < pc->size; peer++) {
        double *message = incoming + (size_t)peer * MONITOR_PERIOD_DOUBLES;
        if (peer == pc->rank) {
            memcpy(message, m->period_outgoing, MONITOR_PERIOD_DOUBLES * sizeof *message);
            continue;
        }
        int code = MPI_Recv(message, MONITOR_PERIOD_DOUBLES, MPI_DOUBLE, peer, PERIOD_TAG,
                            m->comm, MPI_STATUS_IGNORE);
        if (code != MPI_SUCCESS) return record_error(code, "papcoll: monitor receive failed");
        if (message[PERIOD_NUMBER] != m->period_outgoing[PERIOD_NUMBER] ||
            message[PERIOD_CALLS] != m->period_outgoing[PERIOD_CALLS])
            return record_error(MPI_ERR_INTERN,
                                "papcoll: rank %d ended arrival period %.0f while rank %d "
                                "ended period %.0f: the ranks do not make the same sequence "
                                "of calls on this communicator",
                                peer, message[PERIOD_NUMBER], pc->rank,
                                m->period_outgoing[PERIOD_NUMBER]);
    }
    int calls = (int)m->period_outgoing[PERIOD_CALLS], all_edge = 1;
    double spread = 0, call_seconds = 0;
    for (int r = 0; r < pc->size; r++) m->lateness[r] = 0;
    for (int k = 0; k < calls; k++) {
        double longest = -INFINITY, shortest = INFINITY;
        for (int r = 0; r < pc->size; r++) {
            double wait = incoming[(size_t)r * MONITOR_PERIOD_DOUBLES + k];
            longest = fmax(longest, wait);
            shortest = fmin(shortest, wait);
        }
        for (int r = 0; r < pc->size; r++)
            m->lateness[r] += (longest - incoming[(size_t)r * MONITOR_PERIOD_DOUBLES + k]) / calls;
        spread += (longest - shortest) / calls;
        call_seconds += shortest / calls;
    }
    for (int r = 0; r < pc->size; r++)
        all_edge &= incoming[(size_t)r * MONITOR_PERIOD_DOUBLES + PERIOD_ALL_EDGE] != 0;
    m->spread = spread;
    m->call_seconds = call_seconds;
    m->have_lateness = 1;
    m->edge_mode = all_edge && spread > edge_worth_spread * call_seconds &&
                   spread > ARRIVAL_JITTER_SECONDS;
    return MPI_SUCCESS;
}

/* AUTOMATIC, at the end of a call: its wait joins the period; at the period's end the
 * waits go to every other rank (eager, no collective; received at the next call). */
static int end_period_call(papcoll_comm *pc) {
    monitor_state *m = &pc->monitor;
    m->period_waits[m->period_calls++] = MPI_Wtime() - m->arrival;
    m->period_all_edge &= m->used_edge;
    m->used_edge = 0;
    if (m->period_calls < m->period_length) return MPI_SUCCESS;
    if (m->periods > 0) { /* the last period's sends, long done: their buffer is reused */
        int code = MPI_Waitall(pc->size - 1, m->period_requests, MPI_STATUSES_IGNORE);
        if (code != MPI_SUCCESS) return record_error(code, "papcoll: monitor send failed");
    }
    double *message = m->period_outgoing;
    memset(message, 0, MONITOR_PERIOD_DOUBLES * sizeof *message);
    memcpy(message, m->period_waits, (size_t)m->period_calls * sizeof *message);
    message[PERIOD_ALL_EDGE] = m->period_all_edge;
    message[PERIOD_CALLS] = m->period_calls;
    message[PERIOD_NUMBER] = (double)m->periods;
    int posted = 0;
    for (int k = 0; k < pc->size; k++) m->period_requests[k] = MPI_REQUEST_NULL;
    for (int peer = 0; peer < pc->size; peer++) {
        if (peer == pc->rank) continue;
        int code = MPI_Isend(message, MONITOR_PERIOD_DOUBLES, MPI_DOUBLE, peer, PERIOD_TAG,
                             m->comm, &m->period_requests[posted++]);
        if (code != MPI_SUCCESS) return record_error(code, "papcoll: monitor send failed");
    }
    m->period_pending = 1;
    m->periods++;
    m->period_calls = 0;
    m->period_all_edge = 1;
    if (m->period_length < MONITOR_PERIOD_MOST) m->period_length *= 2;
    return MPI_SUCCESS;
}

void monitor_release(papcoll_comm *pc) {
    monitor_state *m = &pc->monitor;
    if (m->comm != MPI_COMM_NULL) {
        /* Messages nobody received would make MPI_Comm_free fail (MPICH checks): take them.
         * HISTORY: the arrivals of the last call. EDGE: predictions made after the last
         * slt/prr call; if any rank made one, the others complete the round with NaN. */
        if (pc->config.arrival_source == PAPCOLL_ARRIVALS_HISTORY && m->history_calls > 0) {
            receive_from_all(pc, (double)(m->history_calls - 1));
        } else if (sends_predictions(pc)) {
            int anyone_sent = 0;
            MPI_Allreduce(&m->sent, &anyone_sent, 1, MPI_INT, MPI_MAX, m->comm);
            if (anyone_sent && !m->sent) send_to_all(pc, NAN, (double)m->calls);
            if (anyone_sent) receive_from_all(pc, (double)m->calls);
        }
        if (m->period_pending) receive_period(pc);
        wait_for_sends(m);
        if (m->periods > 0)
            MPI_Waitall(pc->size - 1, m->period_requests, MPI_STATUSES_IGNORE);
    }
    monitor_free(m);
}

/* ---- the compute phase: local calls ------------------------------------------------------ */

/* The prediction of this phase, on the local clock, or NaN with an error. */
static int predict(papcoll_comm *pc, double local_prediction, const char *refused) {
    monitor_state *m = &pc->monitor;
    double now = MPI_Wtime();
    int valid = refused == NULL && isfinite(local_prediction) &&
                local_prediction <= now + most_seconds_ahead &&
                (isnan(m->begin) || local_prediction >= m->begin);
    /* history mode ignores edges, and only the first prediction of a phase counts (and is
     * sent, where predictions travel at once); a bad argument is still reported */
    int first = pc->config.arrival_source != PAPCOLL_ARRIVALS_HISTORY && !m->sent;
    if (first) {
        m->used_edge = valid;
        int code = MPI_SUCCESS;
        if (sends_predictions(pc))
            code = send_to_all(pc, valid ? local_prediction + m->clock_offset : NAN,
                               (double)m->calls);
        else if ((code = wait_for_sends(m)) == MPI_SUCCESS) /* buffer free again */
            m->outgoing[0] = valid ? local_prediction + m->clock_offset : NAN;
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
    if (!(seconds >= 0 && seconds <= most_seconds_ahead))
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

static double best_half_round_trip(papcoll_comm *pc, char *buffer, int bytes, int rounds) {
    monitor_state *m = &pc->monitor;
    double best = INFINITY;
    for (int round = 0; round < rounds; round++) {
        if (pc->rank == 0) {
            double start = MPI_Wtime();
            MPI_Send(buffer, bytes, MPI_BYTE, 1, CALIBRATION_TAG, m->comm);
            MPI_Recv(buffer, bytes, MPI_BYTE, 1, CALIBRATION_TAG, m->comm, MPI_STATUS_IGNORE);
            double half = (MPI_Wtime() - start) / 2;
            if (half < best) best = half;
        } else {
            MPI_Recv(buffer, bytes, MPI_BYTE, 0, CALIBRATION_TAG, m->comm, MPI_STATUS_IGNORE);
            MPI_Send(buffer, bytes, MPI_BYTE, 0, CALIBRATION_TAG, m->comm);
        }
    }
    return best;
}

/* tau's model in the order of monitor_state and PAPCOLL_TAU_MODEL's names. */
enum { MODEL_LATENCY, MODEL_SECONDS_PER_BYTE, MODEL_REDUCE_SECONDS_PER_BYTE, MODEL_SIZE };
static const char *const model_names[MODEL_SIZE] = {"latency", "seconds_per_byte",
                                                    "reduce_seconds_per_byte"};

/* Parses PAPCOLL_TAU_MODEL's text ("name=value,name=value,name=value") into model[]; 0 and
 * a reason in why[] if it is malformed. */
static int parse_tau_model(const char *text, double model[MODEL_SIZE], char *why,
                           size_t why_size) {
    int seen[MODEL_SIZE] = {0};
    const char *item = text;
    for (;;) {
        const char *end = strchr(item, ',');
        if (end == NULL) end = item + strlen(item);
        const char *equals = memchr(item, '=', (size_t)(end - item));
        int name_length = (int)((equals ? equals : end) - item);
        int which = -1;
        for (int i = 0; i < MODEL_SIZE; i++)
            if ((size_t)name_length == strlen(model_names[i]) &&
                strncmp(item, model_names[i], (size_t)name_length) == 0)
                which = i;
        if (which < 0) {
            if (name_length == 0)
                snprintf(why, why_size, "an item has no name (items are name=value, "
                                        "separated by commas)");
            else
                snprintf(why, why_size, "unknown name '%.*s' (the names are latency, "
                         "seconds_per_byte, reduce_seconds_per_byte)",
                         name_length > 40 ? 40 : name_length, item);
            return 0;
        }
        if (seen[which]) {
            snprintf(why, why_size, "%s is given twice", model_names[which]);
            return 0;
        }
        /* strtod needs a terminated string: copy the value (a number is short) */
        char number[64];
        size_t length = equals ? (size_t)(end - equals - 1) : 0;
        if (length == 0) {
            snprintf(why, why_size, "%s has no value (write %s=SECONDS)", model_names[which],
                     model_names[which]);
            return 0;
        }
        if (length >= sizeof number) length = sizeof number - 1; /* then not all parsed */
        memcpy(number, equals + 1, length);
        number[length] = '\0';
        char *stop = NULL;
        double value = strtod(number, &stop);
        if (stop == number || *stop != '\0' || (size_t)(end - equals - 1) != length) {
            snprintf(why, why_size, "%s=%.40s is not a number", model_names[which], number);
            return 0;
        }
        if (!isfinite(value)) {
            snprintf(why, why_size, "%s=%.40s is not a finite number", model_names[which],
                     number);
            return 0;
        }
        if (value < 0) {
            snprintf(why, why_size, "%s=%.40s is negative", model_names[which], number);
            return 0;
        }
        model[which] = value;
        seen[which] = 1;
        if (*end == '\0') break;
        item = end + 1;
    }
    for (int i = 0; i < MODEL_SIZE; i++)
        if (!seen[i]) {
            snprintf(why, why_size, "%s is missing (give latency, seconds_per_byte and "
                     "reduce_seconds_per_byte)", model_names[i]);
            return 0;
        }
    return 1;
}

/* Collective: PAPCOLL_TAU_MODEL read on every rank; *given says whether rank 0 has one.
 * Malformed text on any rank is an error on every rank. */
static int read_tau_model(papcoll_comm *pc, double model[MODEL_SIZE], int *given) {
    const char *text = getenv("PAPCOLL_TAU_MODEL");
    int set = text != NULL && text[0] != '\0';
    char why[200] = "";
    int malformed = set && !parse_tau_model(text, model, why, sizeof why);
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
static int measure_tau_model(papcoll_comm *pc, double model[MODEL_SIZE]) {
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
            model[MODEL_LATENCY] = latency;
            model[MODEL_SECONDS_PER_BYTE] = large > latency ? (large - latency) / LARGE : 1e-12;
        }
    }
    if (pc->rank == 0) {
        double best = INFINITY;
        for (int round = 0; round < 5; round++) {
            double start = MPI_Wtime();
            MPI_Reduce_local(buffer, accumulator, LARGE / (int)sizeof(float), MPI_FLOAT, MPI_SUM);
            double elapsed = MPI_Wtime() - start;
            if (elapsed < best) best = elapsed;
        }
        model[MODEL_REDUCE_SECONDS_PER_BYTE] = best / LARGE;
    }
    free(buffer);
    free(accumulator);
    return MPI_SUCCESS;
}

/* Collective: the latency, bandwidth and reduce speed behind tau (see the header), from
 * PAPCOLL_TAU_MODEL or measured. */
static int calibrate(papcoll_comm *pc) {
    monitor_state *m = &pc->monitor;
    double model[MODEL_SIZE] = {1e-6, 1e-10, 1e-10};
    int given = 0;
    int code = read_tau_model(pc, model, &given);
    if (code != MPI_SUCCESS) return code;
    if (!given && (code = measure_tau_model(pc, model)) != MPI_SUCCESS) return code;
    code = MPI_Bcast(model, MODEL_SIZE, MPI_DOUBLE, 0, m->comm);
    if (code != MPI_SUCCESS) return record_error(code, "papcoll: calibrating tau failed");
    /* warm-up: one empty message each way between every pair of ranks (see the header).
     * Its tag may also be a schedule tag on pc->comm; MPI matches messages of one sender and
     * tag in order, and each rank posts these before any schedule message. */
    MPI_Request *requests = malloc(2 * (size_t)pc->size * sizeof *requests);
    if (requests == NULL) return record_error(MPI_ERR_NO_MEM, "papcoll: out of memory");
    int posted = 0;
    char empty = 0;
    for (int peer = 0; peer < pc->size; peer++) {
        if (peer == pc->rank) continue;
        MPI_Irecv(NULL, 0, MPI_BYTE, peer, CALIBRATION_TAG, pc->comm, &requests[posted++]);
        MPI_Isend(&empty, 0, MPI_BYTE, peer, CALIBRATION_TAG, pc->comm, &requests[posted++]);
    }
    code = MPI_Waitall(posted, requests, MPI_STATUSES_IGNORE);
    free(requests);
    if (code != MPI_SUCCESS) return record_error(code, "papcoll: connection warm-up failed");
    m->latency = model[MODEL_LATENCY];
    m->seconds_per_byte = model[MODEL_SECONDS_PER_BYTE];
    m->reduce_seconds_per_byte = model[MODEL_REDUCE_SECONDS_PER_BYTE];
    m->calibrated = 1;
    return MPI_SUCCESS;
}

int monitor_gather(papcoll_comm *pc, double segment_bytes, const double **arrivals,
                   double *tau, int *usable) {
    monitor_state *m = &pc->monitor;
    m->arrival = MPI_Wtime();
    int code;
    if (!m->calibrated && (code = calibrate(pc)) != MPI_SUCCESS) return code;
    *tau = monitor_tau(pc, segment_bytes);
    if (pc->config.arrival_source == PAPCOLL_ARRIVALS_HISTORY) {
        *usable = m->history_calls > 0;
        if (*usable) {
            if ((code = receive_from_all(pc, (double)(m->history_calls - 1))) != MPI_SUCCESS)
                return code;
            m->received[pc->rank] = m->outgoing[0];
            double earliest = INFINITY;
            for (int r = 0; r < pc->size; r++) earliest = fmin(earliest, m->received[r]);
            for (int r = 0; r < pc->size; r++) {
                double relative = m->received[r] - earliest;
                m->average[r] = m->history_calls == 1 ? relative
                                                      : (m->average[r] + relative) / 2;
                m->received[r] = m->average[r];
            }
        }
    } else {
        /* AUTOMATIC: this call's source is the one decided before its compute phase */
        int edge_call = sends_predictions(pc);
        if (m->period_pending && (code = receive_period(pc)) != MPI_SUCCESS) return code;
        *usable = 0;
        if (edge_call) {
            if (!m->sent) { /* no prediction this phase: say so, so nobody waits for one */
                if ((code = send_to_all(pc, NAN, (double)m->calls)) != MPI_SUCCESS) return code;
            }
            if ((code = receive_from_all(pc, (double)m->calls)) != MPI_SUCCESS) return code;
            m->received[pc->rank] = m->outgoing[0];
            *usable = 1;
            for (int r = 0; r < pc->size; r++) *usable &= isfinite(m->received[r]);
            /* every rank sees the same gap and leaves the edge mode alike */
            if (!*usable && pc->config.arrival_source == PAPCOLL_ARRIVALS_AUTOMATIC)
                m->edge_mode = 0;
        }
        if (!*usable && pc->config.arrival_source == PAPCOLL_ARRIVALS_AUTOMATIC &&
            m->have_lateness) {
            memcpy(m->received, m->lateness, (size_t)pc->size * sizeof *m->received);
            *usable = 1;
        }
    }
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
    if (*usable && latest - earliest > most_seconds_ahead) *usable = 0;
    for (int r = 0; r < pc->size; r++)
        m->last_arrivals[r] = *usable ? m->received[r] - earliest : 0;
    *arrivals = m->last_arrivals;
    m->last_predicted = *usable;
    m->last_tau = *tau;
    return MPI_SUCCESS;
}

double monitor_tau(const papcoll_comm *pc, double segment_bytes) {
    const monitor_state *m = &pc->monitor;
    double tau = m->latency + segment_bytes * (m->seconds_per_byte + m->reduce_seconds_per_byte);
    return tau > 0 ? tau : 1e-9;
}

int monitor_model(const papcoll_comm *pc, double *latency, double *seconds_per_byte,
                  double *reduce_seconds_per_byte) {
    const monitor_state *m = &pc->monitor;
    *latency = m->latency;
    *seconds_per_byte = m->seconds_per_byte;
    *reduce_seconds_per_byte = m->reduce_seconds_per_byte;
    return m->calibrated;
}

int monitor_finish_call(papcoll_comm *pc) {
    monitor_state *m = &pc->monitor;
    if (pc->config.arrival_source == PAPCOLL_ARRIVALS_AUTOMATIC) return end_period_call(pc);
    if (pc->config.arrival_source != PAPCOLL_ARRIVALS_HISTORY) return MPI_SUCCESS;
    int code = send_to_all(pc, m->arrival + m->clock_offset, (double)m->history_calls);
    m->history_calls++;
    return code;
}
