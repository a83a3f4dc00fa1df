/* persistent.c - papcoll_allreduce_init / papcoll_start: MPI_Allreduce_init's semantics,
 * with the arrival history kept per request.
 *
 * A persistent request is one call site that every rank agrees on, which a blocking call
 * in a preloaded program is not (the drop-in cannot tell two MPI_Allreduce call sites
 * apart). So each start sends this rank's start time (on rank 0's clock, clock_offsets.h)
 * to every other rank, receiving theirs, as part of the operation. A start can begin only
 * after the previous start's request completed, and that needed every rank's contribution,
 * so every rank had made that start and sent its time: at start k every rank holds the
 * times of starts 1 .. k-1, the same on all, and predicts start k from them without
 * waiting (arrival_history.h says how, and when a prediction is not trusted). auto decides
 * each start through the one decision every call kind goes through (auto_call.h, kind
 * STARTED), with the request's own decisions and measurements. Requests of a fixed, not
 * PAP-aware, algorithm send nothing.
 *
 * auto's closed loop is measured by the same messages: each start's message also carries
 * the moment this rank completed the start before (rank 0's clock). At start k every rank
 * so holds starts k-1's start times and start k-2's completions, and so start k-2's time
 * from its last arrival to its completion (the latest completion less the latest start),
 * which goes to the request's loop under the tag start k-2 ran with: the same number on
 * every rank, two starts late.
 *
 *   start        1        2        3                       4
 *   sends        t1, -    t2, c1   t3, c2                  t4, c3
 *   observes     -        -        start 1: max c1 - max t1  start 2: max c2 - max t2
 *
 * Init is collective (as MPI's is): it reserves the request's own tags on the papcoll
 * communicator (persistent_communicator), since starts of several persistent requests may
 * come in different orders on different ranks (MPI-4.1 6.13), and calibrates tau if the
 * communicator has not yet. Free is local.
 */
#define _POSIX_C_SOURCE 200809L /* sched_yield */
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "arrival_history.h"
#include "call_arguments.h"
#include "call_plan.h"
#include "monitor_tau.h"
#include "mpi_features.h"
#include "operation.h"

enum { OWN_COMMUNICATOR_ARRIVAL_TAG = SCHED_MAX_TAG + 1 };
/* How long papcoll_persistent_free waits for MPI to let go of the last request. */
#define RELEASE_SECONDS 1.0

struct papcoll_persistent {
    papcoll_comm *pc;
    /* pc's non-blocking communicator, its tags reserved at init (tag_counter.h); or a
     * duplicate of its own (owns_comm; persistent_communicator says when) */
    MPI_Comm comm;
    int owns_comm;
    int arrival_tag;           /* the start times' tag */
    /* auto on pc's communicator: MPI's own persistent all-reduce, made at init, for the
     * starts auto runs as native (an MPI_Iallreduce at a start would be a collective in
     * start order, which MPI lets differ between ranks) */
    MPI_Request native;
    const void *sendbuf;
    void *recvbuf;
    MPI_Count count;
    MPI_Datatype datatype;
    MPI_Op op;
    const algorithm_entry *algorithm; /* NULL: auto */
    int64_t extent;
    int commutative;
    int exchanges;             /* auto or PAP-aware: starts exchange their times */
    plan_cache plans;
    papcoll_operation operation;
    int64_t starts;
    /* 2 P, rank 0's clock: per rank its time at this start and its completion of the start
     * before (NaN: none); the last start's, once received */
    double *times;
    double latest_start[2];    /* the last two starts' latest start time (auto's loop) */
    monitor_call_tag start_tags[2]; /* and what each ran, for the loop */
    arrival_history history;   /* the starts before: what a start is predicted from */
    MPI_Request *arrival_requests; /* 2 (P - 1) */
    int32_t *arrival_kinds;        /* a receive, then a send, per peer (exchange_times) */
    auto_choice last_choice;
    decision_site *decisions;  /* auto: the request's own decisions (auto_call.h says why) */
    int64_t times_abandoned;   /* start-time requests left to MPI when times was replaced */
    /* a start failed after its start times went out: the peers' times of that start may
     * still arrive, and would be taken for the next start's (every rank must hold the same
     * history), so the request takes no more starts */
    int spoiled;
};

static void release(papcoll_persistent *p) {
    plan_cache_clear(&p->plans);
    executor_workspace_release(&p->operation.workspace);
    if (p->native != MPI_REQUEST_NULL) MPI_Request_free(&p->native);
    if (p->owns_comm && p->comm != MPI_COMM_NULL) MPI_Comm_free(&p->comm);
    /* start times MPI could not settle may still arrive there: left to MPI for good */
    if (p->operation.start_times_abandoned == p->times_abandoned) free(p->times);
    arrival_history_release(&p->history);
    free(p->arrival_requests);
    free(p->arrival_kinds);
    if (p->decisions != NULL) decision_site_release(p->decisions);
    free(p->decisions);
    free(p);
}

/* MPI's own persistent all-reduce of the request, for the starts auto runs as native. */
static int native_request(papcoll_persistent *p) {
    int code;
#if MPI_VERSION >= 4 /* the large-count twin */
    code = MPI_Allreduce_init_c(p->sendbuf, p->recvbuf, p->count, p->datatype, p->op,
                                p->comm, MPI_INFO_NULL, &p->native);
#elif PAPCOLL_HAVE_ALLREDUCE_INIT
    code = MPI_Allreduce_init(p->sendbuf, p->recvbuf, (int)p->count, p->datatype, p->op,
                              p->comm, MPI_INFO_NULL, &p->native);
#else
    code = MPI_ERR_INTERN; /* not reached: persistent_communicator duplicates instead */
#endif
    if (code == MPI_SUCCESS) return MPI_SUCCESS;
    p->native = MPI_REQUEST_NULL;
    return record_error(code, "papcoll_allreduce_init: MPI_Allreduce_init (for the starts "
                              "auto runs as native) failed");
}

/* Where the request's messages go: pc's non-blocking communicator, on tags reserved now
 * (init is collective, so every rank reserves the same range: tag_counter.c), spending no
 * context id; else a duplicate of its own: where the counter has none left, or where auto
 * may run a start as native and this MPI has no persistent all-reduce (an MPI_Iallreduce
 * at the start would be a collective in start order on a shared communicator). Collective. */
static int persistent_communicator(papcoll_persistent *p) {
    papcoll_comm *pc = p->pc;
    /* MPI 3 runs no native all-reduce above INT_MAX elements (rules.c), nor does SMPI any
     * for a start (mpi_features.h), so needs none */
    int needs_native = PAPCOLL_NONBLOCKING_NATIVE && p->algorithm == NULL && p->count > 0 &&
                       (MPI_VERSION >= 4 || p->count <= INT_MAX);
    int64_t place = 0;
    int32_t first = -1;
    if (!needs_native || PAPCOLL_HAVE_ALLREDUCE_INIT)
        first = tag_counter_reserve(&pc->tags, &place);
    p->operation.place = place;
    if (first >= 0) {
        p->comm = pc->nonblocking_comm;
        p->arrival_tag = first;
        p->operation.tag_first = first + 1;
        return needs_native ? native_request(p) : MPI_SUCCESS;
    }
    int code = MPI_Comm_dup(pc->comm, &p->comm);
    if (code != MPI_SUCCESS) {
        p->comm = MPI_COMM_NULL;
        return record_error(code, "papcoll_allreduce_init: MPI_Comm_dup failed");
    }
    p->owns_comm = 1;
    p->operation.tag_first = 0;
    MPI_Comm_set_errhandler(p->comm, MPI_ERRORS_RETURN);
    int *tag_upper_bound = NULL, found = 0; /* the start times travel above the schedule's */
    MPI_Comm_get_attr(p->comm, MPI_TAG_UB, &tag_upper_bound, &found);
    p->arrival_tag = OWN_COMMUNICATOR_ARRIVAL_TAG;
    if (!found || *tag_upper_bound < OWN_COMMUNICATOR_ARRIVAL_TAG) p->exchanges = 0;
    return MPI_SUCCESS;
}

int papcoll_allreduce_init(papcoll_comm *pc, const void *sendbuf, void *recvbuf,
                           MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                           papcoll_persistent **out) {
    if (out == NULL) return record_error(MPI_ERR_ARG, "papcoll_allreduce_init: out is NULL");
    *out = NULL;
    if (pc == NULL) return record_error(MPI_ERR_ARG, "papcoll_allreduce_init: pc is NULL");
    call_shape shape;
    /* init is collective: it may check agreement, as a blocking call does */
    int code = call_arguments_check_agreed(pc, sendbuf, recvbuf, count, datatype, op,
                                           "papcoll_allreduce_init", &shape);
    if (code != MPI_SUCCESS) return code;
    const algorithm_entry *algorithm = shape.algorithm;
    papcoll_persistent *p = calloc(1, sizeof *p);
    if (p == NULL) return record_error(MPI_ERR_NO_MEM, "papcoll_allreduce_init: out of memory");
    size_t ranks = (size_t)pc->size;
    p->times = calloc(2 * ranks, sizeof *p->times);
    int history_made = arrival_history_init(&p->history, pc->size, &pc->config.tuning);
    p->arrival_requests = malloc(2 * ranks * sizeof *p->arrival_requests);
    p->arrival_kinds = malloc(2 * ranks * sizeof *p->arrival_kinds);
    p->comm = MPI_COMM_NULL;
    p->native = MPI_REQUEST_NULL;
    if (algorithm == NULL && (p->decisions = malloc(sizeof *p->decisions)) != NULL &&
        decision_site_init(p->decisions, pc->size) != MPI_SUCCESS)
        history_made = 0; /* released below with the rest */
    if (!p->times || !history_made || !p->arrival_requests || !p->arrival_kinds ||
        (algorithm == NULL && p->decisions == NULL)) {
        release(p);
        return record_error(MPI_ERR_NO_MEM, "papcoll_allreduce_init: out of memory");
    }
    p->pc = pc;
    p->sendbuf = sendbuf;
    p->recvbuf = recvbuf;
    p->count = count;
    p->datatype = datatype;
    p->op = op;
    p->algorithm = algorithm;
    /* auto in reproducible mode chose at the check (call_arguments.c); what it chose is what
     * papcoll_persistent_last_choice tells */
    if (algorithm != NULL && call_arguments_is_auto(pc)) p->last_choice = pc->last_choice;
    p->extent = shape.extent;
    p->commutative = shape.commutative;
    p->exchanges = (algorithm == NULL || algorithm->info.needs_arrivals) && pc->size > 1;
    p->operation.pc = pc;
    p->operation.owner = p;
    p->operation.request = MPI_REQUEST_NULL;
    p->operation.arrival_requests = p->arrival_requests;
    p->operation.arrival_kinds = p->arrival_kinds;
    for (size_t k = 0; k < 2 * ranks; k++) p->arrival_kinds[k] = k % 2 == 0 ? 1 : -1;
    if ((code = persistent_communicator(p)) != MPI_SUCCESS) {
        release(p);
        return code;
    }
    double latency, seconds_per_byte, reduce_seconds_per_byte;
    /* calibrated here, where every rank is, for auto too where no times travel: a start
     * must not decide on a model that a blocking call calibrates between two ranks' starts */
    if ((p->exchanges || algorithm == NULL) &&
        !monitor_model(pc, &latency, &seconds_per_byte, &reduce_seconds_per_byte) &&
        (code = monitor_calibrate(pc)) != MPI_SUCCESS) {
        release(p);
        return code;
    }
    __atomic_add_fetch(&pc->persistent_alive, 1, __ATOMIC_ACQ_REL);
    *out = p;
    return MPI_SUCCESS;
}

/* Whether MPI let go of op's last request (called its free function). The program's wait
 * may return a moment before (operation.h), so this waits up to RELEASE_SECONDS; longer
 * only where the program never completed the request. */
static int released_by_mpi(papcoll_operation *op) {
    double deadline = MPI_Wtime() + RELEASE_SECONDS;
    while (__atomic_load_n(&op->held_by_mpi, __ATOMIC_ACQUIRE) && MPI_Wtime() < deadline)
        sched_yield();
    return !__atomic_load_n(&op->held_by_mpi, __ATOMIC_ACQUIRE);
}

/* After a start failed before its post: the start times already in flight must not write
 * into p->times later, or stay posted (request_settling.h). */
static void settle_start_times(papcoll_operation *op) {
    request_settling_finish(op->arrival_requests, op->arrival_count, op->arrival_kinds,
                            &op->start_times_abandoned);
    op->arrival_count = 0;
}

/* Start times MPI could not settle (here or after a failure in the engine) may still
 * arrive in p->times: a new array for the next starts, the old one left to MPI for good. */
static void replace_abandoned_times(papcoll_persistent *p) {
    if (p->operation.start_times_abandoned == p->times_abandoned) return;
    p->times_abandoned = p->operation.start_times_abandoned;
    p->times = calloc(2 * (size_t)p->pc->size, sizeof *p->times);
    if (p->times == NULL) p->exchanges = 0;
}

/* This start's time and the previous start's completion (NaN: none) to every other rank,
 * and theirs into p->times. */
static int exchange_times(papcoll_persistent *p, double now) {
    papcoll_comm *pc = p->pc;
    int posted = 0;
    p->times[2 * pc->rank] = now;
    p->times[2 * pc->rank + 1] =
        p->starts > 0 ? p->operation.finished_at + pc->monitor.clock_offset : NAN;
    for (int peer = 0; peer < pc->size; peer++) {
        if (peer == pc->rank) continue;
        int code = MPI_Irecv(&p->times[2 * peer], 2, MPI_DOUBLE, peer, p->arrival_tag,
                             p->comm, &p->arrival_requests[posted++]);
        if (code == MPI_SUCCESS)
            code = MPI_Isend(&p->times[2 * pc->rank], 2, MPI_DOUBLE, peer, p->arrival_tag,
                             p->comm, &p->arrival_requests[posted++]);
        if (code != MPI_SUCCESS) { /* the failed call's slot holds no request */
            p->operation.arrival_count = posted - 1;
            return record_error(code, "papcoll_start: sending the start time failed");
        }
    }
    p->operation.arrival_count = posted;
    return MPI_SUCCESS;
}

/* At start s (p->starts, from 0; s >= 1): the latest start time of start s - 1 is kept, and
 * start s - 2's time from its last arrival to its latest completion returned (NaN where
 * there is none: s < 2, or a rank had no completion to send). */
static double observe_start(papcoll_persistent *p) {
    double latest = -INFINITY, completed = -INFINITY;
    for (int32_t r = 0; r < p->pc->size; r++) {
        latest = fmax(latest, p->times[2 * r]);
        completed = fmax(completed, p->times[2 * r + 1]); /* fmax skips a NaN */
    }
    int64_t s = p->starts;
    double seconds = NAN;
    for (int32_t r = 0; s >= 2 && r < p->pc->size; r++)
        if (isnan(p->times[2 * r + 1])) completed = NAN;
    if (s >= 2 && isfinite(completed)) seconds = fmax(0, completed - p->latest_start[s % 2]);
    p->latest_start[(s - 1) % 2] = latest;
    return seconds;
}

int papcoll_start(papcoll_persistent *p, MPI_Request *request) {
    return papcoll_start_notifying(p, request, NULL, NULL);
}

int papcoll_start_notifying(papcoll_persistent *p, MPI_Request *request,
                            void (*finished)(void *argument, int error,
                                             const char *message),
                            void *argument) {
    if (request == NULL) return record_error(MPI_ERR_REQUEST, "papcoll_start: request is NULL");
    *request = MPI_REQUEST_NULL;
    if (p == NULL) return record_error(MPI_ERR_REQUEST, "papcoll_start: persistent is NULL");
    if (__atomic_load_n(&p->operation.running, __ATOMIC_ACQUIRE) ||
        !released_by_mpi(&p->operation))
        return record_error(MPI_ERR_REQUEST, "papcoll_start: the previous start's request "
                            "is not completed yet (MPI_Wait or papcoll_wait it first)");
    if (p->spoiled || (p->operation.error != MPI_SUCCESS &&
                       (p->operation.run.posted_any || p->exchanges)))
        return record_error(MPI_ERR_OTHER, "papcoll_start: an earlier start of this request "
                            "failed with messages in flight (its schedule's or its start "
                            "times); free it and create another");
    papcoll_comm *pc = p->pc;
    double now = MPI_Wtime() + pc->monitor.clock_offset;
    auto_call call = {.kind = AUTO_CALL_STARTED, .count = p->count, .extent = p->extent,
                      .commutative = p->commutative, .datatype = p->datatype, .op = p->op,
                      .site = p->decisions,
                      .measured = p->exchanges};
    double observed = NAN;
    if (p->exchanges) {
        call.tau = monitor_tau(pc, (double)((p->count + pc->size - 1) / pc->size) *
                                       (double)p->extent);
        /* the last start's times, once: a start refused before its exchange (alike on
         * every rank) may be tried again, and must not count them twice */
        if (p->starts > p->history.recorded) {
            arrival_history_record(&p->history, p->times, 2, call.tau);
            observed = observe_start(p);
        }
        if (arrival_history_predict(&p->history)) call.arrivals = p->history.predicted;
    }
    if (isfinite(observed)) { /* start starts - 2's time after its last arrival */
        call.observed_tags = &p->start_tags[p->starts % 2];
        call.observed_seconds = &observed;
        call.observed_count = 1;
    }
    papcoll_operation *op = &p->operation;
    replace_abandoned_times(p);
    op->plan = NULL;
    op->arrival_count = 0;
    memset(&op->settling, 0, sizeof op->settling);
    memset(&op->start_times_settling, 0, sizeof op->start_times_settling);
    op->finished = NULL; /* set only once the start cannot fail before its post */
    /* auto or the request's algorithm; native (op->plan NULL): MPI_Iallreduce */
    monitor_call_tag tag;
    int code = operation_choose(pc, p->algorithm, &p->plans, &call, &p->last_choice, &tag,
                                &op->plan);
    if (code == MPI_SUCCESS && p->exchanges) code = exchange_times(p, now);
    if (code != MPI_SUCCESS) {
        p->spoiled = op->arrival_count > 0;
        settle_start_times(op);
        return code;
    }
    p->start_tags[p->starts % 2] = tag;
    p->starts++;
    op->request = MPI_REQUEST_NULL;
    op->finished = finished;
    op->finished_argument = argument;
    op->native_persistent = p->native;
    code = operation_start(op, p->comm, p->sendbuf, p->recvbuf, p->count, p->datatype, p->op);
    if (op->request == MPI_REQUEST_NULL) { /* failed before its post: no notice */
        op->finished = NULL;
        p->spoiled = op->arrival_count > 0;
        settle_start_times(op);
        progress_finish_unstarted(op);
    }
    *request = op->request;
    return op->request != MPI_REQUEST_NULL ? MPI_SUCCESS : code;
}

int papcoll_persistent_free(papcoll_persistent **persistent) {
    if (persistent == NULL || *persistent == NULL) return MPI_SUCCESS;
    papcoll_operation *op = &(*persistent)->operation;
    if (__atomic_load_n(&op->running, __ATOMIC_ACQUIRE))
        return record_error(MPI_ERR_REQUEST, "papcoll_persistent_free: a start's request is "
                            "not completed yet (MPI forbids freeing an active persistent "
                            "collective request)");
    if (!released_by_mpi(op))
        return record_error(MPI_ERR_REQUEST, "papcoll_persistent_free: the last start's "
                            "request is not completed yet: complete it with MPI_Wait, "
                            "MPI_Test or papcoll_wait first");
    __atomic_sub_fetch(&(*persistent)->pc->persistent_alive, 1, __ATOMIC_ACQ_REL);
    release(*persistent);
    *persistent = NULL;
    return MPI_SUCCESS;
}

int papcoll_persistent_last_choice(const papcoll_persistent *persistent,
                                   papcoll_choice *choice, int64_t *starts) {
    if (persistent == NULL || choice == NULL)
        return record_error(MPI_ERR_ARG, "papcoll_persistent_last_choice: an argument is NULL");
    *choice = persistent->last_choice.report;
    if (starts != NULL) *starts = persistent->starts;
    return MPI_SUCCESS;
}
