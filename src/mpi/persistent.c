/* persistent.c - papcoll_allreduce_init / papcoll_start (issue 33): MPI_Allreduce_init's
 * semantics, with the arrival history kept per request.
 *
 * A persistent request is one call site that every rank agrees on, which a blocking call
 * in a preloaded program is not (the drop-in cannot tell two MPI_Allreduce call sites
 * apart). So each start sends this rank's start time (on rank 0's clock, clock_offsets.h)
 * to every other rank, receiving theirs, as part of the operation. A start can begin only
 * after the previous start's request completed, and that needed every rank's contribution,
 * so every rank had made that start and sent its time: at start k every rank holds the
 * times of starts 1 .. k-1, the same on all, and decides start k from them without waiting.
 * The prediction for each rank is its median lateness (after the earliest) over the last
 * PERSISTENT_HISTORY starts: one odd start does not move it, and a lasting change shows
 * after PERSISTENT_HISTORY / 2 + 1 starts. Requests of a fixed, not PAP-aware, algorithm
 * send nothing.
 *
 * A prediction is used only while it has been right (second session of issue 33): each
 * start's times also judge the prediction that start ran on: did the rank it named as last
 * come last (within an on-time unit), or, where it named none, did none. When most of the
 * last PERSISTENT_HISTORY judged predictions missed, the pattern is one the history does
 * not foretell (a late rank drawn at random each call: the median names a
 * rank that was late twice, and straggler then waits for the wrong one), and the start is
 * decided as balanced; predictions are still made and judged, and trusted again once most
 * are right. A one-late pattern is never affected: its predictions hit from the first.
 * Judgments come from the same history on every rank, so they agree.
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

#include "call_arguments.h"
#include "arrival_class.h"
#include "call_plan.h"
#include "monitor_tau.h"
#include "operation.h"

enum { PERSISTENT_HISTORY = 3, OWN_COMMUNICATOR_ARRIVAL_TAG = SCHED_MAX_TAG + 1 };
/* How long papcoll_persistent_free waits for MPI to let go of the last request. */
#define RELEASE_SECONDS 1.0

struct papcoll_persistent {
    papcoll_comm *pc;
    /* pc's non-blocking communicator, its tags reserved at init (tag_counter.h); or, where
     * none were left, a duplicate of its own (owns_comm) */
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
    double *times;             /* P: the current start's times, rank 0's clock */
    double *history;           /* PERSISTENT_HISTORY x P latenesses, oldest overwritten */
    double *predicted;         /* P */
    uint8_t missed[PERSISTENT_HISTORY]; /* per judged start: its prediction missed */
    int64_t judged;            /* starts whose prediction was judged */
    MPI_Request *arrival_requests; /* 2 (P - 1) */
    int32_t *arrival_kinds;        /* a receive, then a send, per peer (exchange_times) */
    auto_choice last_choice;
    /* auto's decision for the last arrival class (persistent_decide), and its scratch */
    uint8_t *classes, *decided_classes, *profile;
    double *class_arrivals;
    int decided;               /* decided_classes and last_choice hold a decision */
    int64_t times_abandoned;   /* start-time requests left to MPI when times was replaced */
};

static void release(papcoll_persistent *p) {
    plan_cache_clear(&p->plans);
    executor_workspace_release(&p->operation.workspace);
    if (p->native != MPI_REQUEST_NULL) MPI_Request_free(&p->native);
    if (p->owns_comm && p->comm != MPI_COMM_NULL) MPI_Comm_free(&p->comm);
    /* start times MPI could not settle may still arrive there: left to MPI for good */
    if (p->operation.start_times_abandoned == p->times_abandoned) free(p->times);
    free(p->history);
    free(p->predicted);
    free(p->arrival_requests);
    free(p->arrival_kinds);
    free(p->classes);
    free(p->decided_classes);
    free(p->profile);
    free(p->class_arrivals);
    free(p);
}

/* Where the request's messages go: pc's non-blocking communicator, on tags reserved now
 * (init is collective, so every rank reserves the same range: tag_counter.c), spending no
 * context id; else, where the counter has none left, a duplicate of its own. Collective. */
static int persistent_communicator(papcoll_persistent *p) {
    papcoll_comm *pc = p->pc;
    int64_t place = 0;
    int32_t first = tag_counter_reserve(&pc->tags, &place);
    p->operation.place = place;
    if (first >= 0) {
        p->comm = pc->nonblocking_comm;
        p->arrival_tag = first;
        p->operation.tag_first = first + 1;
#if MPI_VERSION >= 4
        if (p->algorithm == NULL && p->count > 0 && p->count <= INT_MAX) {
            int code = MPI_Allreduce_init(p->sendbuf, p->recvbuf, (int)p->count, p->datatype,
                                          p->op, p->comm, MPI_INFO_NULL, &p->native);
            if (code != MPI_SUCCESS) {
                p->native = MPI_REQUEST_NULL;
                return record_error(code, "papcoll_allreduce_init: MPI_Allreduce_init (for "
                                          "the starts auto runs as native) failed");
            }
        }
        return MPI_SUCCESS;
#endif
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
    const algorithm_entry *algorithm = NULL;
    int64_t extent = 0;
    int commutative = 0;
    /* init is collective: it may check agreement, as a blocking call does */
    int code = call_arguments_check_agreed(pc, sendbuf, recvbuf, count, datatype, op,
                                           "papcoll_allreduce_init", &algorithm, &extent,
                                           &commutative);
    if (code != MPI_SUCCESS) return code;
    papcoll_persistent *p = calloc(1, sizeof *p);
    if (p == NULL) return record_error(MPI_ERR_NO_MEM, "papcoll_allreduce_init: out of memory");
    size_t ranks = (size_t)pc->size;
    p->times = calloc(ranks, sizeof *p->times);
    p->history = calloc(PERSISTENT_HISTORY * ranks, sizeof *p->history);
    p->predicted = calloc(ranks, sizeof *p->predicted);
    p->arrival_requests = malloc(2 * ranks * sizeof *p->arrival_requests);
    p->arrival_kinds = malloc(2 * ranks * sizeof *p->arrival_kinds);
    p->classes = malloc(ranks);
    p->decided_classes = malloc(ranks);
    p->profile = malloc(ranks);
    p->class_arrivals = malloc(ranks * sizeof *p->class_arrivals);
    p->comm = MPI_COMM_NULL;
    p->native = MPI_REQUEST_NULL;
    if (!p->times || !p->history || !p->predicted || !p->arrival_requests ||
        !p->arrival_kinds || !p->classes ||
        !p->decided_classes || !p->profile || !p->class_arrivals) {
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
    p->extent = extent;
    p->commutative = commutative;
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
    if (p->exchanges &&
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

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The last start's times (all received: its request completed) into the history, and the
 * prediction for the next: each rank's median lateness over the history. 0: no history. */
/* Judges the prediction the last start ran on (p->predicted still holds it) against row,
 * what happened, on what auto's choice rests: which rank comes last. A prediction that
 * named a late rank hit when that rank arrived within one on-time unit of the last
 * arrival; a balanced one (no rank an on-time unit late) hit when no rank was. The unit is
 * arrival_class.h's (the larger of P tau and the jitter of ranks sharing cores), so the
 * scheduling noise among on-time ranks never counts as a miss. */
static void judge_prediction(papcoll_persistent *p, const double *row, double tau) {
    int32_t ranks = p->pc->size;
    double unit = fmax(tau * ranks, ARRIVAL_JITTER_SECONDS);
    int32_t named = 0;
    double latest = 0;
    for (int32_t r = 0; r < ranks; r++) {
        if (p->predicted[r] > p->predicted[named]) named = r;
        if (row[r] > latest) latest = row[r];
    }
    int hit = p->predicted[named] < unit ? latest < unit : row[named] >= latest - unit;
    p->missed[p->judged % PERSISTENT_HISTORY] = !hit;
    p->judged++;
}

/* 1 while most of the last judged predictions were right (or none was judged yet). */
static int prediction_trusted(const papcoll_persistent *p) {
    int64_t kept = p->judged < PERSISTENT_HISTORY ? p->judged : PERSISTENT_HISTORY;
    int misses = 0;
    for (int64_t k = 0; k < kept; k++) misses += p->missed[k];
    return 2 * misses <= kept;
}

/* Takes the last start's times into the history and predicts this start's arrivals into
 * p->predicted; 1 when that prediction is to be used (there is one, and it is trusted). */
static int predict(papcoll_persistent *p, double tau) {
    int32_t ranks = p->pc->size;
    if (p->starts == 0) return 0;
    double earliest = INFINITY;
    for (int32_t r = 0; r < ranks; r++)
        if (p->times[r] < earliest) earliest = p->times[r];
    double *row = &p->history[((p->starts - 1) % PERSISTENT_HISTORY) * ranks];
    for (int32_t r = 0; r < ranks; r++) row[r] = p->times[r] - earliest;
    if (p->starts >= 2) judge_prediction(p, row, tau);
    int64_t kept = p->starts < PERSISTENT_HISTORY ? p->starts : PERSISTENT_HISTORY;
    double values[PERSISTENT_HISTORY];
    for (int32_t r = 0; r < ranks; r++) {
        for (int64_t k = 0; k < kept; k++) values[k] = p->history[k * ranks + r];
        qsort(values, (size_t)kept, sizeof values[0], compare_doubles);
        p->predicted[r] = values[kept / 2];
    }
    double least = INFINITY; /* medians need not keep a zero: relative to the earliest again */
    for (int32_t r = 0; r < ranks; r++)
        if (p->predicted[r] < least) least = p->predicted[r];
    for (int32_t r = 0; r < ranks; r++) p->predicted[r] -= least;
    return prediction_trusted(p);
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
    p->times = calloc((size_t)p->pc->size, sizeof *p->times);
    if (p->times == NULL) p->exchanges = 0;
}

/* This start's time to every other rank, and theirs into p->times. */
static int exchange_times(papcoll_persistent *p, double now) {
    papcoll_comm *pc = p->pc;
    int posted = 0;
    p->times[pc->rank] = now;
    for (int peer = 0; peer < pc->size; peer++) {
        if (peer == pc->rank) continue;
        int code = MPI_Irecv(&p->times[peer], 1, MPI_DOUBLE, peer, p->arrival_tag, p->comm,
                             &p->arrival_requests[posted++]);
        if (code == MPI_SUCCESS)
            code = MPI_Isend(&p->times[pc->rank], 1, MPI_DOUBLE, peer, p->arrival_tag, p->comm,
                             &p->arrival_requests[posted++]);
        if (code != MPI_SUCCESS) { /* the failed call's slot holds no request */
            p->operation.arrival_count = posted - 1;
            return record_error(code, "papcoll_start: sending the start time failed");
        }
    }
    p->operation.arrival_count = posted;
    return MPI_SUCCESS;
}

/* auto's decision for a start: the cost model's alone (choose.h: choice_decide), on this
 * request's own predictions, never the communicator's decision cache or closed loop, which
 * blocking calls change: MPI lets ranks order starts differently from the communicator's
 * other collectives (MPI-4.1 6.13), so only what the request itself holds is the same on
 * every rank at a start. Kept per arrival class: a start of the class before decides
 * nothing. */
static void persistent_decide(papcoll_persistent *p, const double *arrivals, double tau) {
    papcoll_comm *pc = p->pc;
    choice_input input;
    memset(&input, 0, sizeof input);
    input.ranks = pc->size;
    input.count = p->count;
    input.extent = p->extent;
    input.commutative = p->commutative;
    input.parameters = &pc->parameters.parameters;
    input.calibrated = monitor_model(pc, &input.latency, &input.seconds_per_byte,
                                     &input.reduce_seconds_per_byte);
    if (arrivals != NULL) {
        arrival_class_of(arrivals, pc->size, tau * pc->size, p->classes, p->class_arrivals);
        input.arrival_class = p->classes;
        input.profile = p->profile;
        input.arrivals = p->class_arrivals;
        input.tau = tau;
    } else {
        memset(p->classes, 0, (size_t)pc->size);
    }
    if (p->decided && memcmp(p->classes, p->decided_classes, (size_t)pc->size) == 0) return;
    choice_decide(&input, &p->last_choice);
    p->last_choice.native_variant = 0;
    if (p->last_choice.algorithm == NULL) strcpy(p->last_choice.report.algorithm, "native");
    memcpy(p->decided_classes, p->classes, (size_t)pc->size);
    p->decided = 1;
}

int papcoll_start(papcoll_persistent *p, MPI_Request *request) {
    return papcoll_start_notifying(p, request, NULL, NULL);
}

int papcoll_start_notifying(papcoll_persistent *p, MPI_Request *request,
                            void (*finished)(void *argument, int error), void *argument) {
    if (request == NULL) return record_error(MPI_ERR_REQUEST, "papcoll_start: request is NULL");
    *request = MPI_REQUEST_NULL;
    if (p == NULL) return record_error(MPI_ERR_REQUEST, "papcoll_start: persistent is NULL");
    if (__atomic_load_n(&p->operation.running, __ATOMIC_ACQUIRE) ||
        !released_by_mpi(&p->operation))
        return record_error(MPI_ERR_REQUEST, "papcoll_start: the previous start's request "
                            "is not completed yet (MPI_Wait or papcoll_wait it first)");
    if (p->operation.error != MPI_SUCCESS && p->operation.run.posted_any)
        return record_error(MPI_ERR_OTHER, "papcoll_start: an earlier start of this request "
                            "failed with messages in flight; free it and create another");
    papcoll_comm *pc = p->pc;
    double now = MPI_Wtime() + pc->monitor.clock_offset;
    const double *arrivals = NULL;
    double tau = 0;
    if (p->exchanges) {
        tau = monitor_tau(pc, (double)((p->count + pc->size - 1) / pc->size) *
                                  (double)p->extent);
        if (predict(p, tau)) arrivals = p->predicted;
    }
    papcoll_operation *op = &p->operation;
    replace_abandoned_times(p);
    op->plan = NULL;
    op->arrival_count = 0;
    memset(&op->settling, 0, sizeof op->settling);
    memset(&op->start_times_settling, 0, sizeof op->start_times_settling);
    op->finished = NULL; /* set only once the start cannot fail before its post */
    int code = MPI_SUCCESS;
    const algorithm_entry *algorithm = p->algorithm;
    if (algorithm == NULL && p->count > 0) { /* auto */
        persistent_decide(p, arrivals, tau);
        algorithm = p->last_choice.algorithm;
    }
    if (algorithm != NULL && p->count > 0) /* else native: MPI_Iallreduce, or count 0 */
        code = call_plan_for_call(pc, &p->plans, algorithm, p->count, p->extent,
                                  p->commutative, arrivals, tau, &op->plan);
    if (code == MPI_SUCCESS && p->exchanges) code = exchange_times(p, now);
    if (code != MPI_SUCCESS) {
        settle_start_times(op);
        return code;
    }
    p->starts++;
    op->request = MPI_REQUEST_NULL;
    op->finished = finished;
    op->finished_argument = argument;
    op->native_persistent = p->native;
    code = operation_start(op, p->comm, p->sendbuf, p->recvbuf, p->count, p->datatype, p->op);
    if (op->request == MPI_REQUEST_NULL) { /* failed before its post: no notice */
        op->finished = NULL;
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
