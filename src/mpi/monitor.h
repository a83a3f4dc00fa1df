/* monitor.h - the arrival monitor of Proficz 2018, Sect. 3 (monitor.c and its parts): predictions
 * exchanged during the compute phase, from one of three sources (monitor_source.h), put on
 * rank 0's clock (clock_offsets.h), and the calibration behind tau (monitor_tau.c). Its
 * public entry points (papcoll_compute_begin, papcoll_edge, ...) are in include/papcoll.h. */
#ifndef PAPCOLL_MPI_MONITOR_H
#define PAPCOLL_MPI_MONITOR_H

#include <mpi.h>
#include <stdint.h>

#include "papcoll.h"
#include "tau_model.h"

struct monitor_source;

/* The most calls of one period (monitor_source_automatic.c): 8, so that what a period
 * shows (a moved late rank, auto's measured times) reaches every rank within 9 calls; a
 * longer period would send fewer messages (P - 1 per rank and period) but learn later. */
enum { MONITOR_PERIOD_MOST_CALLS = 8 };

/* What a call ran, for auto's closed loop: the tags auto_feedback.c gave it for the
 * decision and for native's variants (native_feedback.c), each >= 0, or -1: not measured
 * for that. The monitor keeps them and hands them back with the call's time; it only looks
 * whether a call has one, never at what it means. */
typedef struct monitor_call_tag {
    double decision, native;
} monitor_call_tag;
#define MONITOR_NO_TAG ((monitor_call_tag){-1, -1})

/* The monitor's state, one per papcoll communicator. */
typedef struct monitor_state {
    /* pc->comm, its tags in window 1 (tag_base SCHED_MAX_TAG + 1), where MPI_TAG_UB leaves
     * room; else its own duplicate (tag_base 0): either way predictions never meet schedule
     * traffic (communicator.c: prepare_nonblocking) */
    MPI_Comm comm;
    int shares_communicator;
    int tag_base;
    const struct monitor_source *source; /* config.arrival_source's, chosen at creation */
    double clock_offset;       /* MPI_Wtime() + clock_offset = time on rank 0's clock */
    double begin;              /* local time of compute_begin, NAN if none this phase */
    int sent;                  /* this phase's prediction has gone out */
    double outgoing[2];        /* {prediction on rank 0's clock or NAN, call number} */
    MPI_Request *send_requests;
    int sends_in_flight;
    double *received;          /* P predictions of the current call */
    double *average;           /* HISTORY: moving average of each rank's relative arrival */
    int history_calls;         /* HISTORY: calls whose arrivals went out */
    int64_t calls;             /* calls of auto or a PAP-aware algorithm so far */
    double arrival;            /* local time this rank entered the current call */
    int calibrated;
    double model[TAU_MODEL_SIZE]; /* tau's model (tau_model.h), the same on every rank */
    int last_predicted;        /* papcoll_last_prediction */
    double *last_arrivals;
    double last_tau;
    /* PAPCOLL_ARRIVALS_AUTOMATIC (monitor_source_automatic.c): periods of calls whose waits
     * every rank sends to all at the period's end. */
    int edge_mode;             /* predictions travel at edge(); the same on every rank */
    int used_edge;             /* this compute phase made a valid prediction */
    int period_all_edge;       /* every call of the period so far had one */
    int period_length, period_calls;
    double *period_waits;      /* this rank's wait (exit - entry) in each call of the period */
    double *period_outgoing;   /* the period's message, in flight to every other rank */
    double *period_incoming;   /* P messages of MONITOR_PERIOD_DOUBLES */
    MPI_Request *period_requests;
    MPI_Request *receives;     /* P: a round's receives from every other rank (a period's
                                  messages, a call's predictions), all posted before any is
                                  waited for (monitor_messages.c says why) */
    double *incoming_predictions; /* 2 x P: a call's predictions as they arrive */
    int period_pending;        /* a period's messages went out and are not yet received */
    int64_t periods;
    double *lateness;          /* the latest period: each rank's median arrival after the
                                  earliest (seconds), or of its last calls where the pattern
                                  changed in it; valid when have_lateness */
    double *recent_lateness;   /* scratch, 2 x P: the same over the period's last calls,
                                  and over one call */
    int have_lateness;
    double spread;             /* the latest period: mean of (latest - earliest arrival) */
    double call_seconds;       /* the latest period: mean of the shortest wait (the call) */
    /* auto's closed loop: what each call ran, and what it was measured to take */
    monitor_call_tag call_tag; /* the current call's tags (monitor_tag_call), -1: none */
    double period_entries[MONITOR_PERIOD_MOST_CALLS]; /* this rank's entries, rank 0's clock */
    /* per call of the period: from the entry to the end of the monitor's own work before
     * the algorithm (calibration, a period's messages, predictions); the closed loop
     * measures a call from its latest rank's end of that work, not its entry, for the work
     * falls on fixed calls (after a period's end), which are where its first probes run */
    double period_monitor_seconds[MONITOR_PERIOD_MOST_CALLS];
    double ready;              /* this call: when the monitor's work before it ended */
    /* The last blocking call's own work (papcoll_last_own_seconds): before the algorithm
     * (ready - arrival) and after it (finish_call: a period's messages go out); 0 after a
     * call of an algorithm that needs no arrivals. */
    double own_before_seconds, own_after_seconds;
    monitor_call_tag period_tags[MONITOR_PERIOD_MOST_CALLS];   /* each call's tag in this period */
    monitor_call_tag sent_tags[MONITOR_PERIOD_MOST_CALLS];     /* the tags of the period in flight */
    double observed[MONITOR_PERIOD_MOST_CALLS];      /* last arrival to completion, s */
    monitor_call_tag observed_tags[MONITOR_PERIOD_MOST_CALLS];
    int observed_count;        /* observations not yet taken (monitor_take_observations) */
    /* a call of the period (of the period in flight) ran a schedule built on the arrivals,
     * not as a probe: only then are per-call predictions worth their message round */
    int period_built_on_arrivals, sent_built_on_arrivals;
} monitor_state;

/* A period's message: every call's wait, entry (on rank 0's clock) and monitor seconds, and
 * three numbers. */
enum { MONITOR_PERIOD_MOST = MONITOR_PERIOD_MOST_CALLS,
       MONITOR_PERIOD_DOUBLES = 3 * MONITOR_PERIOD_MOST_CALLS + 3 };

/* The monitor's message tags, added to its tag_base (monitor_tag); the warm-up's CALIBRATION
 * tag also travels on the schedule's communicator: monitor_tau.c says why that is safe. */
enum {
    MONITOR_PREDICTION_TAG = 1,
    MONITOR_CALIBRATION_TAG = 2,
    MONITOR_CLOCK_TAG = 3,
    MONITOR_PERIOD_TAG = 4,
    MONITOR_DECISION_TAG = 5, /* auto's decision, from the rank that made it (choice_sharing.c) */
};

static inline int monitor_tag(const monitor_state *m, int tag) { return m->tag_base + tag; }

/* Predictions further ahead than this (or spread wider) are taken for nonsense. */
#define MONITOR_MOST_SECONDS_AHEAD 3600.0

/* monitor.c. Created with the communicator (measures clock offsets: collective); cleans up
 * after itself on failure. */
int monitor_create(papcoll_comm *pc);
void monitor_release(papcoll_comm *pc);
/* At the start of a call of auto or of a PAP-aware algorithm (collective): gathers every
 * rank's prediction and says whether all are usable; *arrivals then points at P times in
 * seconds after the earliest (the monitor's own array, kept for papcoll_last_prediction),
 * and tau is for a segment of segment_bytes. Returns MPI_SUCCESS or an error class. */
int monitor_gather(papcoll_comm *pc, double segment_bytes, const double **arrivals,
                   double *tau, int *usable);
/* Between the two: papcoll's own work before the algorithm ends here (monitor_gather marks
 * it too; auto marks it again after its decision, which may travel from the decider): auto's
 * closed loop times a call from its latest rank's mark (monitor_source_automatic.c). */
void monitor_own_work_done(papcoll_comm *pc);
/* At the end of such a call: what the source learns from it (HISTORY sends this call's
 * arrival to the others; AUTOMATIC records its wait and, at a period's end, sends the
 * period's waits). */
int monitor_finish_call(papcoll_comm *pc);
/* tau for a segment of segment_bytes under the model (> 0): the one formula every use of
 * tau goes through (papcoll_tau_model_tau), so a decision made outside a call
 * (papcoll_resolve_algorithm) is made with the tau the call uses. */
double monitor_tau(const papcoll_comm *pc, double segment_bytes);
/* The P arrivals the next call without a per-call prediction would build from (relative to
 * the earliest), as the source learnt them between calls, once tau is calibrated; returns
 * 0 where there are none (EDGE and HISTORY learn only at the call). */
int monitor_learnt_arrivals(const papcoll_comm *pc, double *arrivals);
/* The current call runs a schedule built on the predicted arrivals (a PAP-aware algorithm
 * that auto preferred, or that the user named): AUTOMATIC turns per-call predictions on
 * only after a period with such calls, since they serve nothing else. */
void monitor_call_built_on_arrivals(papcoll_comm *pc);
/* Whether the monitor's source measures the calls it is told of (AUTOMATIC). */
int monitor_measures_calls(const papcoll_comm *pc);
/* auto's closed loop: the tags (the same on every rank) of what the current call ran,
 * which the call's measured time comes back with; AUTOMATIC measures, the other sources
 * ignore them. */
void monitor_tag_call(papcoll_comm *pc, monitor_call_tag tag);
/* The measured calls that arrived with the last period's messages (AUTOMATIC only): their
 * tags and each one's time from the last arrival to completion (the latest exit less the
 * latest entry plus that rank's own-work seconds, on rank 0's clock), the same on every
 * rank; returns how many (0: none new) and
 * hands them over once. */
int monitor_take_observations(papcoll_comm *pc, const monitor_call_tag **tags,
                              const double **seconds);
/* The model behind tau (latency, seconds per byte, reduce seconds per byte), the same on
 * every rank once calibrated; returns 0 if no call has calibrated it yet. */
int monitor_model(const papcoll_comm *pc, double *latency, double *seconds_per_byte,
                  double *reduce_seconds_per_byte);

#endif /* PAPCOLL_MPI_MONITOR_H */
