/* nonblocking_calls.c - the drop-in's non-blocking and persistent all-reduce:
 * MPI_Iallreduce, MPI_Allreduce_init and the calls a persistent request lives by
 * (MPI_Start, MPI_Startall, MPI_Request_free); everything else passes to the MPI.
 *
 * MPI_Iallreduce becomes papcoll_iallreduce, whose generalized request completes in the
 * program's own MPI_Wait / MPI_Test / MPI_Waitall... where something inside those calls
 * advances papcoll (papcoll_mpi_advances_requests: MPI's progress hook, MPICH's or Open
 * MPI's, or the progress thread). It needs the communicator's papcoll communicator to
 * exist already: making one is collective, and a post must not wait for the other ranks.
 * So it is made where the program is in a collective call anyway: MPI_Init for
 * MPI_COMM_WORLD (intercept.c), the constructor of every communicator the program makes
 * (communicator_constructors.c), else an earlier blocking call or MPI_Allreduce_init. Where
 * either is missing the call passes to the MPI, counted, and said once on stderr.
 *
 * A persistent request must stay a request the MPI knows: the program may MPI_Wait,
 * MPI_Test, MPI_Waitany or MPI_Request_get_status it, and those are not intercepted. So the
 * program's handle is a shell: a persistent receive of 0 bytes from itself on a private
 * duplicate of MPI_COMM_SELF, with a tag of its own. MPI_Start starts the shell's receive
 * and the papcoll persistent request behind it; when papcoll's engine finishes the
 * operation it sends the shell its 0-byte message (papcoll_start_notifying), and the MPI
 * completes the shell in whichever call the program waits with, leaving it inactive, as a
 * persistent request should be: the MPI keeps every rule of inactive requests, Startall,
 * Waitany indices and statuses. The shell cannot carry papcoll's error, and a generalized
 * request's error would be raised on MPI_COMM_SELF under MPI's words: the completion calls
 * (completion_calls.c) raise an operation's error on the program's communicator, with
 * papcoll's message, from the very call that completes the request.
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "completion_calls.h"
#include "intercept.h"
#include "posted_requests.h"
#include "papcoll.h"

typedef struct persistent_shell {
    MPI_Request shell;          /* the program's handle */
    MPI_Request started;        /* papcoll's request of the last start, waited at the next */
    papcoll_persistent *persistent;
    MPI_Comm comm;              /* the program's, for errors */
    communicator_record *record; /* whose papcoll communicator it runs on */
    int tag;
    const void *caller;         /* its init's call site: starts are counted there */
    MPI_Count count;
    MPI_Datatype datatype;
    /* the last start's outcome, from the engine (start_finished), read by the program's
     * thread once the shell completed (the shell's message follows these writes) */
    int error;
    char message[MPI_MAX_ERROR_STRING];
    int active;                 /* started and not yet completed through the program */
    struct persistent_shell *next;
} persistent_shell;

static pthread_mutex_t shells_lock = PTHREAD_MUTEX_INITIALIZER;
static persistent_shell *shells;    /* guarded by shells_lock */
static MPI_Comm self_comm = MPI_COMM_NULL;
static int next_tag;
static int shells_alive; /* atomic: whether the completion calls need to look */

/* A tag no live shell has (shells_lock held): MPI_TAG_UB is at least 32767. */
static int free_tag(void) {
    for (int tried = 0; tried < 32768; tried++) {
        int tag = next_tag++ % 32768, taken = 0;
        for (persistent_shell *s = shells; s != NULL && !taken; s = s->next)
            taken = s->tag == tag;
        if (!taken) return tag;
    }
    return -1;
}

static persistent_shell *shell_of(MPI_Request request) {
    if (request == MPI_REQUEST_NULL) return NULL;
    pthread_mutex_lock(&shells_lock);
    persistent_shell *s = shells;
    while (s != NULL && s->shell != request) s = s->next;
    pthread_mutex_unlock(&shells_lock);
    return s;
}

int nonblocking_shells_alive(void) { return __atomic_load_n(&shells_alive, __ATOMIC_ACQUIRE); }

void *nonblocking_shell_of(MPI_Request request, MPI_Comm *comm) {
    persistent_shell *s = shell_of(request);
    if (s != NULL) *comm = s->comm;
    return s;
}

int nonblocking_shell_completed(void *shell, char *message, size_t size) {
    persistent_shell *s = shell;
    int active = __atomic_exchange_n(&s->active, 0, __ATOMIC_ACQ_REL);
    int error = __atomic_exchange_n(&s->error, MPI_SUCCESS, __ATOMIC_ACQ_REL);
    if (active && error != MPI_SUCCESS) snprintf(message, size, "%s", s->message);
    return active ? error : MPI_SUCCESS;
}

/* Completes the shell's receive (its 0-byte message; posting is allowed inside MPI's
 * progress, waiting is not). */
static void notify_shell(persistent_shell *s) {
    MPI_Request send;
    if (PMPI_Isend(NULL, 0, MPI_BYTE, 0, s->tag, self_comm, &send) == MPI_SUCCESS)
        PMPI_Request_free(&send);
}

/* papcoll's engine finished a start: its outcome for the completion call, then the shell's
 * message. */
static void start_finished(void *argument, int error, const char *message) {
    persistent_shell *s = argument;
    if (error != MPI_SUCCESS) snprintf(s->message, sizeof s->message, "%s", message);
    __atomic_store_n(&s->error, error, __ATOMIC_RELEASE);
    notify_shell(s);
}

/* The last start's papcoll request (complete once the shell completed); its error went to
 * the call that completed the shell, or comes here where none did. */
static int collect_last_start(persistent_shell *s) {
    if (s->started == MPI_REQUEST_NULL) return MPI_SUCCESS;
    intercept_enter_papcoll();
    int code = papcoll_wait(&s->started, MPI_STATUS_IGNORE);
    intercept_leave_papcoll();
    if (code != MPI_SUCCESS) return intercept_raise_error(s->comm, code);
    char message[MPI_MAX_ERROR_STRING];
    int error = nonblocking_shell_completed(s, message, sizeof message);
    return error == MPI_SUCCESS ? MPI_SUCCESS : intercept_raise_message(s->comm, error, message);
}

static int start_shell(persistent_shell *s) {
    double started = PMPI_Wtime();
    /* MPI: starting an active request is erroneous, MPI_ERR_REQUEST (Open MPI and MPICH
     * natively); papcoll's wait for the last start must not come first */
    if (__atomic_load_n(&s->active, __ATOMIC_ACQUIRE))
        return intercept_raise_message(s->comm, MPI_ERR_REQUEST, "papcoll (libpapcoll_pmpi): "
                                       "MPI_Start of a persistent all-reduce that is still "
                                       "active: complete its last start (MPI_Wait, MPI_Test) "
                                       "first");
    int code = collect_last_start(s);
    if (code != MPI_SUCCESS) return code;
    if ((code = PMPI_Start(&s->shell)) != MPI_SUCCESS)
        return intercept_raise_message(s->comm, code, "papcoll (libpapcoll_pmpi): MPI_Start "
                                       "of the persistent all-reduce's request failed");
    intercept_enter_papcoll();
    code = papcoll_start_notifying(s->persistent, &s->started, start_finished, s);
    intercept_leave_papcoll();
    if (code != MPI_SUCCESS) { /* nothing runs: complete the shell, then report */
        notify_shell(s);
        PMPI_Wait(&s->shell, MPI_STATUS_IGNORE);
        return intercept_raise_error(s->comm, code);
    }
    __atomic_store_n(&s->active, 1, __ATOMIC_RELEASE);
    papcoll_choice choice;
    int64_t starts = 0;
    papcoll_persistent_last_choice(s->persistent, &choice, &starts);
    intercept_count_call_at(s->record, s->caller, CALL_PERSISTENT, s->count, s->datatype,
                            PMPI_Wtime() - started,
                            choice.algorithm[0] ? choice.algorithm : "persistent");
    return MPI_SUCCESS;
}

int MPI_Start(MPI_Request *request) {
    if (intercept_inside_papcoll() || request == NULL) return PMPI_Start(request);
    /* MPI_REQUEST_NULL is what an MPI_Allreduce_init papcoll refused leaves: MPICH ends
     * the job on it whatever the handlers ("Null MPI_Request", raised on a communicator of
     * its own), Open MPI returns MPI_ERR_REQUEST; it is returned, through MPI_COMM_WORLD's
     * handler (the request names no communicator) */
    if (*request == MPI_REQUEST_NULL)
        return intercept_raise_message(MPI_COMM_WORLD, MPI_ERR_REQUEST,
                                       "papcoll (libpapcoll_pmpi): MPI_Start of "
                                       "MPI_REQUEST_NULL (what a refused MPI_Allreduce_init "
                                       "leaves in its request)");
    persistent_shell *s = shell_of(*request);
    return s == NULL ? PMPI_Start(request) : start_shell(s);
}

int MPI_Startall(int count, MPI_Request requests[]) {
    int ours = 0;
    for (int k = 0; k < count && !ours && !intercept_inside_papcoll(); k++)
        ours = shell_of(requests[k]) != NULL;
    if (!ours) return PMPI_Startall(count, requests); /* the program's own, as one call */
    int first_error = MPI_SUCCESS;
    for (int k = 0; k < count; k++) {
        int code = MPI_Start(&requests[k]);
        if (code != MPI_SUCCESS && first_error == MPI_SUCCESS) first_error = code;
    }
    return first_error;
}

int MPI_Request_free(MPI_Request *request) {
    persistent_shell *s = intercept_inside_papcoll() || request == NULL ? NULL
                                                                        : shell_of(*request);
    if (s == NULL) return posted_request_free(request);
    int code = collect_last_start(s);
    intercept_enter_papcoll();
    int freed = papcoll_persistent_free(&s->persistent);
    intercept_leave_papcoll();
    if (freed != MPI_SUCCESS) return intercept_raise_error(s->comm, freed);
    pthread_mutex_lock(&shells_lock);
    persistent_shell **link = &shells;
    while (*link != s) link = &(*link)->next;
    *link = s->next;
    __atomic_sub_fetch(&shells_alive, 1, __ATOMIC_ACQ_REL);
    pthread_mutex_unlock(&shells_lock);
    PMPI_Request_free(&s->shell);
    *request = MPI_REQUEST_NULL;
    MPI_Comm comm = s->comm;
    communicator_record *record = s->record;
    free(s);
    /* the last persistent request of a communicator the user freed frees papcoll's */
    intercept_lock_records();
    int last = --record->persistent_shells == 0 && record->free_when_unused;
    intercept_unlock_records();
    if (last) intercept_free_papcoll_communicator(record);
    (void)comm; /* collect_last_start raised it */
    return code;
}

/* ---- the two calls ---------------------------------------------------------------------- */

/* The MPI's own call where one goes to the MPI: the int-count call, or MPI 4's large-count
 * twin for the _c calls (a count above INT_MAX is papcoll's like any other, and where it goes
 * to the MPI it goes whole, not cast to int). */
typedef int (*native_post)(const void *, void *, MPI_Count, MPI_Datatype, MPI_Op, MPI_Comm,
                           MPI_Request *);
typedef int (*native_init)(const void *, void *, MPI_Count, MPI_Datatype, MPI_Op, MPI_Comm,
                           MPI_Info, MPI_Request *);

static int native_post_int_count(const void *sendbuf, void *recvbuf, MPI_Count count,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                 MPI_Request *request) {
    return PMPI_Iallreduce(sendbuf, recvbuf, (int)count, datatype, op, comm, request);
}

static int native_init_int_count(const void *sendbuf, void *recvbuf, MPI_Count count,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                 MPI_Info info, MPI_Request *request) {
    return PMPI_Allreduce_init(sendbuf, recvbuf, (int)count, datatype, op, comm, info, request);
}

/* What both calls first decide: when the call began (its time counts from there), its
 * record and site, and whether it goes to the MPI (as a blocking call would route it:
 * intercept_route_to_native) and why. */
typedef struct {
    double started;
    communicator_record *record;
    site_record *site;
    native_reason reason;
    int native;
} call_route;

static call_route route_call(const void *sendbuf, const void *recvbuf, MPI_Count count,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                             MPI_Request *request, const void *caller, call_kind kind) {
    call_route route = {.started = PMPI_Wtime(), .site = NULL,
                        .reason = NATIVE_INVALID_ARGUMENTS};
    route.record = intercept_record_and_site(comm, caller, kind, &route.site);
    route.native = request == NULL ||
                   intercept_route_to_native(route.record, sendbuf, recvbuf, count, datatype,
                                             op, &route.reason);
    return route;
}

/* The init counts as one call of its site, whichever route it takes; papcoll's starts count
 * too (MPI's own starts of a request it kept pass unseen). */
static int persistent_init(const void *sendbuf, void *recvbuf, MPI_Count count,
                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                           MPI_Request *request, const void *caller, native_init native) {
    call_route route = route_call(sendbuf, recvbuf, count, datatype, op, comm, request, caller,
                                  CALL_PERSISTENT);
    int code = MPI_SUCCESS;
    /* a refused init leaves no request behind: a later MPI_Start of the handle is the MPI's
     * MPI_ERR_REQUEST, as after a native init that failed */
    if (!route.native) *request = MPI_REQUEST_NULL;
    /* Usually made already (MPI_Init, the communicator's constructor). Where not (a
     * communicator from MPI_Comm_idup, say), it is made here, alike on every rank: MPI-4.1
     * makes a persistent collective's init non-local, a collective that may synchronize
     * like a blocking one (Sect. 6.13). An open MPI Forum proposal would make the inits
     * local, as posts are; that would take this fallback away, not the constructors'. */
    if (!route.native &&
        (code = intercept_make_papcoll_communicator(route.record, comm)) != MPI_SUCCESS)
        return intercept_raise_error(comm, code);
    if (!route.native && !papcoll_mpi_advances_requests())
        route.native = 1, route.reason = NATIVE_NO_PROGRESS;
    if (route.native) {
        intercept_count_call(route.site, count, datatype, PMPI_Wtime() - route.started,
                             &route.reason, NULL);
        return native(sendbuf, recvbuf, count, datatype, op, comm, info, request);
    }
    persistent_shell *s = calloc(1, sizeof *s);
    if (s == NULL) return intercept_raise_error(comm, MPI_ERR_NO_MEM);
    /* not under shells_lock: the dup may run MPI's progress, whose hook's MPI_Test passes
     * through the completion calls, which look shells up */
    static pthread_mutex_t self_comm_lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&self_comm_lock);
    if (self_comm == MPI_COMM_NULL && (code = PMPI_Comm_dup(MPI_COMM_SELF, &self_comm)) ==
        MPI_SUCCESS) /* the shells' own errors are returned, then raised on the program's */
        PMPI_Comm_set_errhandler(self_comm, MPI_ERRORS_RETURN);
    pthread_mutex_unlock(&self_comm_lock);
    pthread_mutex_lock(&shells_lock);
    s->tag = free_tag();
    pthread_mutex_unlock(&shells_lock);
    if (code == MPI_SUCCESS && s->tag < 0) code = MPI_ERR_TAG; /* 32768 live shells */
    if (code == MPI_SUCCESS) {
        intercept_enter_papcoll();
        code = papcoll_allreduce_init(route.record->pc, sendbuf, recvbuf, count, datatype, op,
                                      &s->persistent);
        intercept_leave_papcoll();
    }
    if (code == MPI_SUCCESS)
        code = PMPI_Recv_init(NULL, 0, MPI_BYTE, 0, s->tag, self_comm, &s->shell);
    if (code != MPI_SUCCESS) {
        papcoll_persistent_free(&s->persistent);
        free(s);
        return intercept_raise_error(comm, code);
    }
    s->started = MPI_REQUEST_NULL;
    s->comm = comm;
    s->record = route.record;
    intercept_lock_records();
    route.record->persistent_shells++;
    intercept_unlock_records();
    s->caller = caller;
    s->count = count;
    s->datatype = datatype;
    pthread_mutex_lock(&shells_lock);
    s->next = shells;
    shells = s;
    __atomic_add_fetch(&shells_alive, 1, __ATOMIC_ACQ_REL);
    pthread_mutex_unlock(&shells_lock);
    *request = s->shell;
    intercept_count_call(route.site, count, datatype, PMPI_Wtime() - route.started, NULL, NULL);
    return MPI_SUCCESS;
}

/* A post that went to the MPI for want of a papcoll communicator: said once, by the
 * communicator's rank 0 (a process that is rank 0 of none says nothing, so one line per
 * process at most); in reproducible mode the order papcoll promised is not kept either. */
static void say_not_taken(MPI_Comm comm, int order_not_kept) {
    static int said;
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    if (rank != 0 || __atomic_exchange_n(&said, 1, __ATOMIC_RELAXED)) return;
    fprintf(stderr, "papcoll (libpapcoll_pmpi): an MPI_Iallreduce on a communicator papcoll "
                    "has no communicator for (made by MPI_Comm_idup or a constructor papcoll "
                    "does not intercept, and no blocking MPI_Allreduce or MPI_Allreduce_init "
                    "on it before) went to the MPI%s; the report counts such calls as "
                    "no_papcoll_communicator\n",
            order_not_kept ? " and ran in the MPI's order, which is not the canonical one "
                             "reproducible mode promised" : "");
}

static int post(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                MPI_Op op, MPI_Comm comm, MPI_Request *request, const void *caller,
                native_post native) {
    call_route route = route_call(sendbuf, recvbuf, count, datatype, op, comm, request, caller,
                                  CALL_IALLREDUCE);
    /* both alike on every rank: the communicator was made by a collective call, and the
     * progress route is the MPI's and the configuration's */
    if (!route.native && route.record->pc == NULL)
        route.native = 1, route.reason = NATIVE_NO_PAPCOLL_COMMUNICATOR;
    if (!route.native && !papcoll_mpi_advances_requests())
        route.native = 1, route.reason = NATIVE_NO_PROGRESS;
    if (route.native && route.reason == NATIVE_NO_PAPCOLL_COMMUNICATOR)
        say_not_taken(comm, intercept_reproducible() && papcoll_order_matters(datatype, op));
    if (route.native) {
        int code = native(sendbuf, recvbuf, count, datatype, op, comm, request);
        intercept_count_call(route.site, count, datatype, PMPI_Wtime() - route.started,
                             &route.reason, NULL);
        return code;
    }
    posted_request *owned = posted_request_new(comm);
    if (owned == NULL) return intercept_raise_error(comm, MPI_ERR_NO_MEM);
    intercept_enter_papcoll();
    int code = papcoll_iallreduce_notifying(route.record->pc, sendbuf, recvbuf, count,
                                            datatype, op, request, posted_request_finished,
                                            owned);
    papcoll_choice choice;
    papcoll_last_choice(route.record->pc, &choice);
    intercept_leave_papcoll();
    if (code != MPI_SUCCESS) {
        posted_request_discard(owned);
        return intercept_raise_error(comm, code);
    }
    posted_request_taken(owned, *request);
    intercept_count_call(route.site, count, datatype, PMPI_Wtime() - route.started, NULL,
                         choice.algorithm[0] ? choice.algorithm : "papcoll");
    return MPI_SUCCESS;
}

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm, MPI_Request *request) {
    if (intercept_inside_papcoll())
        return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
    return post(sendbuf, recvbuf, count, datatype, op, comm, request,
                __builtin_return_address(0), native_post_int_count);
}

int MPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    if (intercept_inside_papcoll())
        return PMPI_Allreduce_init(sendbuf, recvbuf, count, datatype, op, comm, info, request);
    return persistent_init(sendbuf, recvbuf, count, datatype, op, comm, info, request,
                           __builtin_return_address(0), native_init_int_count);
}

#if MPI_VERSION >= 4
/* MPI 4's large-count twins (MPICH; Open MPI 5 has none), as for MPI_Allreduce_c. */
int MPI_Iallreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request) {
    if (intercept_inside_papcoll())
        return PMPI_Iallreduce_c(sendbuf, recvbuf, count, datatype, op, comm, request);
    return post(sendbuf, recvbuf, count, datatype, op, comm, request,
                __builtin_return_address(0), PMPI_Iallreduce_c);
}

int MPI_Allreduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                         MPI_Request *request) {
    if (intercept_inside_papcoll())
        return PMPI_Allreduce_init_c(sendbuf, recvbuf, count, datatype, op, comm, info,
                                     request);
    return persistent_init(sendbuf, recvbuf, count, datatype, op, comm, info, request,
                           __builtin_return_address(0), PMPI_Allreduce_init_c);
}
#endif
