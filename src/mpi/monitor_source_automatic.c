/* monitor_source_automatic.c - PAPCOLL_ARRIVALS_AUTOMATIC, the default (papcoll.h says what
 * the user sees): calls run in periods of 1, 2, 4, ... then MONITOR_PERIOD_MOST calls; at a
 * period's end every rank sends every other its wait (exit - entry) and its entry (on rank
 * 0's clock) in each call, eagerly, and receives theirs at the next call. From the P x K
 * entries every rank derives the same pattern: in call k rank r arrived its entry less the
 * earliest after the first (period_lateness: why not from the waits). From the entries and
 * exits, the time each call of auto took from its last arrival
 * to its completion, which auto's closed loop (src/mpi/auto_feedback.c) sets against its
 * model. Where every rank predicted every call of the period and arrivals were spread,
 * predictions travel per call as in EDGE (monitor_source_edge.c) until a call lacks one;
 * else the period's pattern predicts. No per-call messages otherwise: a message round
 * would be a tax on every call. */
#include <math.h>
#include <string.h>

#include "arrival_class.h"
#include "median.h"
#include "monitor_messages.h"
#include "monitor_source.h"

/* A period's message: the waits of its calls, their entries on rank 0's clock from
 * PERIOD_ENTRIES on, the monitor's seconds before each from PERIOD_MONITOR_SECONDS on, then
 * three numbers. */
enum {
    PERIOD_ENTRIES = MONITOR_PERIOD_MOST,
    PERIOD_MONITOR_SECONDS = 2 * MONITOR_PERIOD_MOST,
    PERIOD_ALL_EDGE = 3 * MONITOR_PERIOD_MOST,
    PERIOD_CALLS,
    PERIOD_NUMBER
};

/* Per-call predictions are turned on only where arrivals were spread by more than this
 * share of the call's own time, and by more than scheduling jitter (the tuning's
 * arrival_jitter_seconds, arrival_class.h): below it a prediction could gain little, and
 * its message round would be a tax on every call; and only after a period in which some
 * call ran a schedule built on the arrivals (monitor_call_built_on_arrivals): where auto
 * runs native, exact predictions change nothing, and their round was auto's tax on small
 * calls. */
static const double edge_worth_spread = 0.25;

/* auto's closed loop: each tagged call's time from its last arrival to its completion (the
 * latest exit), on rank 0's clock. An arrival here is when the rank's own work before the
 * algorithm ended (monitor_own_work_done: the calibration at the first call, a period's
 * P - 1 messages after a period's end, a decision sent by its decider): that work is the
 * same whichever algorithm runs, and it falls on the first calls and on those right after
 * the periods' ends (the 2nd, 4th, 8th, ...), where a decision's first probes run too:
 * SMPI, P = 64, 16 KiB, it added 0.4-0.8 ms to Rabenseifner's first probes (0.98 ms) and
 * the calibration's 89 ms to native's first sample, and auto ran native (1.15 ms) for
 * 40 calls. Not the mean exit: an algorithm that lets some ranks go
 * early and others late (straggler's core, a tree's root) makes the next call's arrivals
 * uneven where calls follow each other closely, and the latest exit charges it for that;
 * and not e-bar, whose wait for the last arrival no algorithm changes and whose noise
 * would hide a difference behind a long delay. */
static void observe_period(papcoll_comm *pc, int calls) {
    monitor_state *m = &pc->monitor;
    const double *incoming = m->period_incoming;
    m->observed_count = 0;
    for (int k = 0; k < calls; k++) {
        if (m->sent_tags[k].decision < 0 && m->sent_tags[k].native < 0) continue;
        double latest_entry = -INFINITY, latest_exit = -INFINITY;
        for (int r = 0; r < pc->size; r++) {
            const double *message = incoming + (size_t)r * MONITOR_PERIOD_DOUBLES;
            latest_entry = fmax(latest_entry, message[PERIOD_ENTRIES + k] +
                                                  message[PERIOD_MONITOR_SECONDS + k]);
            latest_exit = fmax(latest_exit, message[PERIOD_ENTRIES + k] + message[k]);
        }
        m->observed_tags[m->observed_count] = m->sent_tags[k];
        m->observed[m->observed_count++] = fmax(0, latest_exit - latest_entry);
    }
}

/* Each rank's median arrival after the earliest over the period's calls first .. end - 1,
 * from the entries on rank 0's clock (clock_offsets.h: measured at creation, so a drift
 * between hosts' clocks since then reads as lateness); spread and call_seconds (may be
 * NULL): the mean of (latest - earliest arrival) and of the shortest wait (the call itself
 * where the ranks leave together, less where a schedule lets some leave early).
 * Entries, not waits: the pattern was read from the waits (in call k the rank that waited
 * longest arrived first), which holds only where every rank leaves at once. A schedule
 * built for a late rank lets ranks leave apart (prr, straggler: the rank named late waits
 * least), so its waits named that rank late again though every rank came at once, and
 * auto kept building for lateness that its own schedule made: SMPI, P = 16, 1 MiB, nobody
 * late after a rand-late point, the pattern of 5.4 - 6.2 ms lasted 16 calls, prr against
 * native at every other call, and at P = 64 auto ran native at 2.5 - 2.9 x the best.
 * The median, not the mean: where ranks share cores, an on-time rank descheduled in one
 * call of 8 comes milliseconds late in it, and its mean over the period made it a late
 * rank (levels 1 - 3 on balanced calls: straggler ran in 3 of 8 balanced calls of 1 KiB in
 * the grid, docs/benchmarks.md); a rank late in most of the period's calls is late in its
 * median. Over 2 calls the median is the mean. */
static void period_lateness(const papcoll_comm *pc, int first, int end, double *lateness,
                            double *spread, double *call_seconds) {
    const double *incoming = pc->monitor.period_incoming;
    double earliest[MONITOR_PERIOD_MOST_CALLS], spread_sum = 0, call_sum = 0;
    int calls = end - first;
    for (int k = first; k < end; k++) {
        double shortest = INFINITY, latest = -INFINITY;
        earliest[k - first] = INFINITY;
        for (int r = 0; r < pc->size; r++) {
            const double *message = incoming + (size_t)r * MONITOR_PERIOD_DOUBLES;
            earliest[k - first] = fmin(earliest[k - first], message[PERIOD_ENTRIES + k]);
            latest = fmax(latest, message[PERIOD_ENTRIES + k]);
            shortest = fmin(shortest, message[k]);
        }
        spread_sum += latest - earliest[k - first];
        call_sum += shortest;
    }
    for (int r = 0; r < pc->size; r++) {
        double late[MONITOR_PERIOD_MOST_CALLS];
        for (int k = first; k < end; k++)
            late[k - first] = incoming[(size_t)r * MONITOR_PERIOD_DOUBLES + PERIOD_ENTRIES + k] -
                              earliest[k - first];
        lateness[r] = median_of(late, calls);
    }
    if (spread) *spread = spread_sum / calls;
    if (call_seconds) *call_seconds = call_sum / calls;
}

/* Whether every rank's lateness in a and b is within tolerance seconds. */
static int alike(const double *a, const double *b, int ranks, double tolerance) {
    for (int r = 0; r < ranks; r++)
        if (fabs(a[r] - b[r]) > tolerance) return 0;
    return 1;
}

/* A pattern that changed within the period ("a changed pattern detected within a
 * few calls"). The period's median mixes the old pattern with the new, and at worst gives a
 * lateness level neither had, which auto's closed loop has not measured. Where the
 * period's last RECENT_CALLS calls agree with each other and not with the period's median,
 * they are the pattern, and the next periods start short again (2, 4, then
 * MONITOR_PERIOD_MOST calls) to confirm it soon. "Agree": every rank's lateness within
 * what could change a decision: a quarter (change_share) of the largest lateness of those
 * calls, and at least a quarter of the call and the scheduling jitter. (On 2 cores shared
 * by 4 ranks, on-time ranks scatter by a few ms; a late rank 20 ms late was missed with a
 * tolerance of the call alone.) Random arrivals (rand-late) rarely give RECENT_CALLS
 * calls alike, so they keep the mean and the long periods. */
enum { RECENT_CALLS = 2 };
static const double change_share = 0.25;
/* A change must also move some rank by more than 2 calls' time and 4 x the jitter: where
 * ranks share cores, a rank descheduled for 2 calls in a row looked like a new late rank,
 * and auto then weighed straggler on balanced calls (64 KiB, P = 4, papcoll bench
 * balanced: straggler or slt in 22 of 200 calls, 113 overruled, auto 1.20 x native). */
static const double change_calls = 2, change_jitters = 4;

static void follow_a_change(papcoll_comm *pc, int calls, double call_seconds) {
    monitor_state *m = &pc->monitor;
    if (calls < 2 * RECENT_CALLS) return;
    double *recent = m->recent_lateness, *one_call = m->recent_lateness + pc->size;
    period_lateness(pc, calls - RECENT_CALLS, calls, recent, NULL, NULL);
    double latest = 0;
    for (int r = 0; r < pc->size; r++) latest = fmax(latest, recent[r]);
    double jitter = pc->config.tuning.arrival_jitter_seconds;
    double tolerance = fmax(fmax(edge_worth_spread * call_seconds, jitter),
                            change_share * latest);
    /* not a change: what stays within a few calls' time (or the jitter) of the mean */
    double significant = fmax(change_calls * call_seconds, change_jitters * jitter);
    if (alike(recent, m->lateness, pc->size, fmax(tolerance, significant))) return;
    for (int k = calls - RECENT_CALLS; k < calls; k++) {
        period_lateness(pc, k, k + 1, one_call, NULL, NULL);
        if (!alike(one_call, recent, pc->size, tolerance)) return;
    }
    memcpy(m->lateness, recent, (size_t)pc->size * sizeof *recent);
    m->period_length = 2;
}

/* Receives the period's message of every other rank and derives, from the P x K entries on
 * rank 0's clock, the pattern every rank then holds alike (period_lateness). */
static int receive_period(papcoll_comm *pc) {
    monitor_state *m = &pc->monitor;
    m->period_pending = 0;
    double *incoming = m->period_incoming;
    memcpy(incoming + (size_t)pc->rank * MONITOR_PERIOD_DOUBLES, m->period_outgoing,
           MONITOR_PERIOD_DOUBLES * sizeof *incoming);
    int code = monitor_receive_round(pc, incoming, MONITOR_PERIOD_DOUBLES, MONITOR_PERIOD_TAG);
    if (code != MPI_SUCCESS) return code;
    for (int peer = 0; peer < pc->size; peer++) {
        const double *message = incoming + (size_t)peer * MONITOR_PERIOD_DOUBLES;
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
    period_lateness(pc, 0, calls, m->lateness, &spread, &call_seconds);
    follow_a_change(pc, calls, call_seconds);
    for (int r = 0; r < pc->size; r++)
        all_edge &= incoming[(size_t)r * MONITOR_PERIOD_DOUBLES + PERIOD_ALL_EDGE] != 0;
    observe_period(pc, calls);
    m->spread = spread;
    m->call_seconds = call_seconds;
    m->have_lateness = 1;
    m->edge_mode = all_edge && m->sent_built_on_arrivals &&
                   spread > edge_worth_spread * call_seconds &&
                   spread > pc->config.tuning.arrival_jitter_seconds;
    return MPI_SUCCESS;
}

/* This call's source is the one decided before its compute phase: per-call predictions in
 * the edge mode, else (or where a rank gave none) the latest period's pattern. */
static int gather(papcoll_comm *pc, int *usable) {
    monitor_state *m = &pc->monitor;
    int edge_call = m->edge_mode, code;
    if (m->period_pending && (code = receive_period(pc)) != MPI_SUCCESS) return code;
    *usable = 0;
    if (edge_call) {
        if ((code = monitor_exchange_predictions(pc, usable)) != MPI_SUCCESS) return code;
        /* every rank sees the same gap and leaves the edge mode alike */
        if (!*usable) m->edge_mode = 0;
    }
    if (!*usable && m->have_lateness) {
        memcpy(m->received, m->lateness, (size_t)pc->size * sizeof *m->received);
        *usable = 1;
    }
    return MPI_SUCCESS;
}

/* At the end of a call: its wait joins the period; at the period's end the waits go to
 * every other rank (eager, no collective; received at the next call). */
static int finish_call(papcoll_comm *pc) {
    monitor_state *m = &pc->monitor;
    m->period_entries[m->period_calls] = m->arrival + m->clock_offset;
    m->period_monitor_seconds[m->period_calls] = fmax(0, m->ready - m->arrival);
    m->period_tags[m->period_calls] = m->call_tag;
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
    memcpy(message + PERIOD_ENTRIES, m->period_entries,
           (size_t)m->period_calls * sizeof *message);
    memcpy(message + PERIOD_MONITOR_SECONDS, m->period_monitor_seconds,
           (size_t)m->period_calls * sizeof *message);
    memcpy(m->sent_tags, m->period_tags, (size_t)m->period_calls * sizeof *m->sent_tags);
    m->sent_built_on_arrivals = m->period_built_on_arrivals;
    m->period_built_on_arrivals = 0;
    message[PERIOD_ALL_EDGE] = m->period_all_edge;
    message[PERIOD_CALLS] = m->period_calls;
    message[PERIOD_NUMBER] = (double)m->periods;
    int posted = 0;
    for (int k = 0; k < pc->size; k++) m->period_requests[k] = MPI_REQUEST_NULL;
    for (int peer = 0; peer < pc->size; peer++) {
        if (peer == pc->rank) continue;
        int code = MPI_Isend(message, MONITOR_PERIOD_DOUBLES, MPI_DOUBLE, peer,
                             monitor_tag(m, MONITOR_PERIOD_TAG), m->comm,
                             &m->period_requests[posted++]);
        if (code != MPI_SUCCESS) return record_error(code, "papcoll: monitor send failed");
    }
    m->period_pending = 1;
    m->periods++;
    m->period_calls = 0;
    m->period_all_edge = 1;
    if (m->period_length < MONITOR_PERIOD_MOST) m->period_length *= 2;
    return MPI_SUCCESS;
}

/* Predictions made after the last call (in the edge mode), the last period's messages, and
 * the completion of its sends. */
static void drain(papcoll_comm *pc) {
    monitor_state *m = &pc->monitor;
    if (m->edge_mode) monitor_drain_predictions(pc);
    if (m->period_pending) receive_period(pc);
    m->observed_count = 0;
    if (m->periods > 0) MPI_Waitall(pc->size - 1, m->period_requests, MPI_STATUSES_IGNORE);
}

/* In the edge mode, the same on every rank (it changes only where every rank sees the same
 * period or the same gap). */
static int in_edge_mode(const papcoll_comm *pc) { return pc->monitor.edge_mode; }

/* The median lateness of the last period, relative to the earliest rank. */
static int learnt_arrivals(const papcoll_comm *pc, double *arrivals) {
    const monitor_state *m = &pc->monitor;
    if (!m->have_lateness) return 0;
    double earliest = INFINITY;
    for (int r = 0; r < pc->size; r++) earliest = fmin(earliest, m->lateness[r]);
    for (int r = 0; r < pc->size; r++) arrivals[r] = m->lateness[r] - earliest;
    return 1;
}

const monitor_source monitor_source_automatic = {
    .takes_predictions = 1,
    .sends_at_once = in_edge_mode,
    .gather = gather,
    .finish_call = finish_call,
    .drain = drain,
    .learnt_arrivals = learnt_arrivals,
    .measures_calls = 1,
};
