/* progress.c - the progress engine of the non-blocking and persistent all-reduce: every
 * operation in flight in the process sits in one list, and whoever holds the engine's lock
 * advances all of them, never only the one it waits for. Why all: rank 0 may
 * wait for operation A while rank 1 waits for B, and each needs the other to forward its
 * messages of the other operation.
 *
 * Who advances (papcoll_progress, include/papcoll.h; docs/nonblocking.md measures each):
 *   - papcoll_wait, papcoll_test and papcoll_progress_poll, always;
 *   - MPI's own progress, where the MPI library lets papcoll hook into it (MPICH >= 4.3's
 *     MPIX_Async_start, Open MPI's opal_progress_register: progress_hook.c), i.e. inside
 *     every MPI call that makes progress: MPI_Wait or MPI_Waitall on the program's
 *     requests, ours among them, MPI_Test, MPI_Iprobe, a blocking MPI_Recv;
 *   - PAPCOLL_PROGRESS_THREAD: one thread per process that polls while operations are in
 *     flight and sleeps on a condition variable when none is.
 * The lock is never waited for where MPI may hold its own: the hook only tries it (a busy
 * engine is being advanced by someone else anyway), which also stops the hook from running
 * inside our own MPI calls.
 *
 * Completion: each operation's request is a generalized request (MPI-4.1 13.2); when its
 * schedule is done the engine calls MPI_Grequest_complete, and MPI then completes it in
 * whichever call the program uses, calling query_status and free_state below.
 */
#define _GNU_SOURCE /* pthread_setaffinity_np, CPU_SET */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "environment.h"
#include "errors.h"
#include "operation.h"

static pthread_mutex_t engine = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_arrived = PTHREAD_COND_INITIALIZER;
static papcoll_operation *running;  /* operations in flight, guarded by engine */
static pthread_t thread;
static int thread_users, thread_stop; /* guarded by engine */
/* Whether this thread holds engine, for the locking contract's debug assertions
 * (operation.c): per thread, so it is never read by another */
static _Thread_local int engine_held_here;

static void engine_lock(void) {
    pthread_mutex_lock(&engine);
    engine_held_here = 1;
}

static int engine_trylock(void) {
    if (pthread_mutex_trylock(&engine) != 0) return 0;
    engine_held_here = 1;
    return 1;
}

static void engine_unlock(void) {
    engine_held_here = 0;
    pthread_mutex_unlock(&engine);
}

int progress_engine_held(void) { return engine_held_here; }

static int advance_from_hook(void (*when_idle)(void));

int papcoll_mpi_advances_requests(void) {
    engine_lock();
    int advances = thread_users > 0 || progress_hook_available(advance_from_hook);
    engine_unlock();
    return advances;
}

/* ---- the generalized request's callbacks ------------------------------------------------ */

/* An operation whose owner is notified (op->finished: the drop-in library) returns
 * MPI_SUCCESS here, and the owner raises the error on the program's communicator with
 * papcoll's message: MPICH turns a callback's code into "user request query (free)
 * function returned error code N" of class MPI_ERR_OTHER and raises it on MPI_COMM_SELF,
 * fatal by default, whatever handler the program's communicator has. */
static int query_status(void *state, MPI_Status *status) {
    const papcoll_operation *op = state;
    MPI_Status_set_elements(status, MPI_BYTE, 0);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    if (op->error == MPI_SUCCESS || op->finished != NULL) return MPI_SUCCESS;
    return record_error(op->error, "%s", op->error_text);
}

/* MPI returns the free function's code from MPI_Wait, so it repeats the error. */
static int free_state(void *state) {
    papcoll_operation *op = state;
    int code = op->finished != NULL ? MPI_SUCCESS : op->error;
    if (code != MPI_SUCCESS) record_error(code, "%s", op->error_text);
    operation_released(op);
    return code;
}

/* MPI-4.1 6.12 makes cancelling a collective erroneous; a generalized request's cancel may
 * leave it to complete normally (13.2), which is what happens: MPI_Cancel returns
 * MPI_SUCCESS, the operation runs to its end, and MPI_Test_cancelled says false. An error
 * here would end the job (MPICH raises it on MPI_COMM_SELF: "cancel function returned error
 * code 19"). The drop-in library refuses MPI_Cancel of its requests before it gets here. */
static int cancel_operation(void *state, int complete) {
    (void)state;
    (void)complete;
    return MPI_SUCCESS;
}

/* ---- advancing ------------------------------------------------------------------------- */

/* Tests requests (MPI_REQUEST_NULL ones are done) without MPI's progress where check is
 * given (see executor_advance). *flag: all are done. */
static int test_requests(MPI_Request *requests, int count, int (*check)(MPI_Request),
                         int *flag) {
    *flag = 1;
    for (int i = 0; i < count; i++) {
        if (requests[i] == MPI_REQUEST_NULL) continue;
        int done = 0;
        if (check == NULL || check(requests[i])) {
            int code = MPI_Test(&requests[i], &done, MPI_STATUS_IGNORE);
            if (code != MPI_SUCCESS) return code;
        }
        if (!done) *flag = 0;
    }
    return MPI_SUCCESS;
}

/* Marks op failed with code: from here on the engine only settles it. */
static void mark_failed(papcoll_operation *op, int code) {
    op->error = code;
    const char *known = papcoll_error_string(code);
    if (strncmp(known, "papcoll", 7) == 0) { /* papcoll's own words (the executor's) */
        snprintf(op->error_text, sizeof op->error_text, "%s", known);
        return;
    }
    char mpi_text[MPI_MAX_ERROR_STRING] = "";
    int length = 0;
    if (MPI_Error_string(code, mpi_text, &length) != MPI_SUCCESS) mpi_text[0] = '\0';
    snprintf(op->error_text, sizeof op->error_text, "papcoll: a message of a non-blocking or "
             "persistent all-reduce failed (erroneous when ranks passed different counts, "
             "datatypes or ops): %s", mpi_text[0] ? mpi_text : known);
}

/* Advances op as far as it goes now; 1 when it is finished (or failed, op->error, and what
 * it left in flight is settled). Inside MPI's progress hook a failure only marks op failed
 * and looks at its requests (request_settling.h); papcoll's own poll or thread cancels. */
static int advance(papcoll_operation *op, int inside_mpi_progress) {
    int (*check)(MPI_Request) = inside_mpi_progress ? progress_hook_request_check() : NULL;
    if (op->error != MPI_SUCCESS) return operation_settle_step(op, check);
    int code = MPI_SUCCESS, done = 1, part = 1;
    if (!operation_claim_tags(op)) return 0; /* an earlier post holds some of its tags */
    if (op->plan != NULL) {
        code = executor_advance(&op->run, check, &part);
        done = part;
    }
    if (code == MPI_SUCCESS && op->native != MPI_REQUEST_NULL) {
        code = test_requests(&op->native, 1, check, &part);
        done = done && part;
    }
    if (code == MPI_SUCCESS && op->arrival_count > 0) {
        code = test_requests(op->arrival_requests, op->arrival_count, check, &part);
        done = done && part;
    }
    if (code == MPI_SUCCESS) return done;
    mark_failed(op, code);
    return operation_settle_step(op, check);
}

/* Operations one pass of the engine advances. Every MPI call of the program (a post
 * too) runs a pass from MPI's hook; with thousands in flight, a pass over all of them made
 * each post cost as much as all before it (16400 posts outstanding did not finish in 300
 * s, tests/mpi/tag_counter.c). The ones advanced go to the end of the list, so every
 * operation is advanced within (operations in flight) / OPERATIONS_PER_PASS passes. */
enum { OPERATIONS_PER_PASS = 64 };

/* Advances the first OPERATIONS_PER_PASS operations in flight; the finished ones leave the
 * list and their requests are completed, the others go to its end. Called with the
 * engine's lock held. After MPI_Grequest_complete the operation may be freed at any moment
 * by the thread that completes the request, so it is unlinked first and never touched
 * after. */
static void advance_all(int inside_mpi_progress) {
    papcoll_operation *advanced = NULL, **advanced_end = &advanced;
    for (int visited = 0; running != NULL && visited < OPERATIONS_PER_PASS; visited++) {
        papcoll_operation *op = running;
        running = op->next;
        if (advance(op, inside_mpi_progress)) {
            operation_finished(op);
            MPI_Grequest_complete(op->request);
        } else {
            op->next = NULL;
            *advanced_end = op;
            advanced_end = &op->next;
        }
    }
    papcoll_operation **end = &running;
    while (*end != NULL) end = &(*end)->next;
    *end = advanced;
}

/* MPI's progress hook calls this (progress_hook_ensure). */
static int advance_from_hook(void (*when_idle)(void)) {
    if (!engine_trylock()) return 0;
    /* only a hook that may not drive MPI's progress again forbids cancels and tests there:
     * MPICH's, which gives a check (progress_hook.c); Open MPI's callback may test */
    request_settling_inside_hook(progress_hook_request_check() != NULL);
    advance_all(1);
    request_settling_inside_hook(0);
    int idle = running == NULL;
    if (idle && when_idle != NULL) when_idle();
    engine_unlock();
    return idle;
}

int progress_begin(papcoll_operation *op) {
    int code = MPI_Grequest_start(query_status, free_state, cancel_operation, op, &op->request);
    if (code != MPI_SUCCESS)
        return record_error(code, "papcoll: MPI_Grequest_start failed");
    __atomic_store_n(&op->held_by_mpi, 1, __ATOMIC_RELEASE);
    engine_lock();
    operation_entered(op);
    if (advance(op, 0)) {
        operation_finished(op);
        engine_unlock();
        MPI_Grequest_complete(op->request);
        return MPI_SUCCESS;
    }
    op->next = running;
    running = op;
    progress_hook_ensure(advance_from_hook);
    pthread_cond_signal(&work_arrived);
    engine_unlock();
    return MPI_SUCCESS;
}

void progress_finish_unstarted(papcoll_operation *op) {
    engine_lock();
    operation_finished(op);
    engine_unlock();
}

int papcoll_progress_poll(void) {
    engine_lock();
    advance_all(0);
    engine_unlock();
    return MPI_SUCCESS;
}

int papcoll_tag_holders(papcoll_comm *pc, int *holding, int64_t *waited) {
    if (pc == NULL) return record_error(MPI_ERR_ARG, "papcoll_tag_holders: pc is NULL");
    engine_lock();
    int held = 0;
    for (const papcoll_operation *op = pc->tag_holders; op != NULL; op = op->next_holder)
        held += op->tags_claimed;
    if (holding != NULL) *holding = held;
    if (waited != NULL) *waited = pc->tag_waits;
    engine_unlock();
    return MPI_SUCCESS;
}

int papcoll_test(MPI_Request *request, int *flag, MPI_Status *status) {
    if (request == NULL || flag == NULL)
        return record_error(MPI_ERR_ARG, "papcoll_test: request or flag is NULL");
    papcoll_progress_poll();
    return MPI_Test(request, flag, status);
}

int papcoll_wait(MPI_Request *request, MPI_Status *status) {
    if (request == NULL) return record_error(MPI_ERR_ARG, "papcoll_wait: request is NULL");
    for (;;) {
        int flag = 0;
        int code = papcoll_test(request, &flag, status);
        if (code != MPI_SUCCESS || flag) return code;
        sched_yield(); /* where ranks share cores, let the peer we wait for run */
    }
}

/* ---- the progress thread ----------------------------------------------------------------- */

/* PAPCOLL_PROGRESS_CPU as progress_thread_acquire read and checked it when it started the
 * thread, which pins itself there: one parser, so the core checked is the core pinned; -1:
 * not pinned */
static long chosen_core = -1;

static void pin_to_chosen_core(void) {
    if (chosen_core < 0) return;
    cpu_set_t cores;
    CPU_ZERO(&cores);
    CPU_SET(chosen_core, &cores);
    pthread_setaffinity_np(pthread_self(), sizeof cores, &cores);
}

static void *progress_main(void *unused) {
    (void)unused;
    pin_to_chosen_core();
    engine_lock();
    while (!thread_stop) {
        if (running == NULL) {
            engine_held_here = 0; /* the wait gives the lock up while it sleeps */
            pthread_cond_wait(&work_arrived, &engine);
            engine_held_here = 1;
            continue;
        }
        advance_all(0);
        engine_unlock();
        sched_yield();
        engine_lock();
    }
    engine_unlock();
    return NULL;
}

int progress_thread_acquire(void) {
    /* a core in this process's affinity mask (the table's check), or -1: not pinned */
    int64_t core = -1;
    int set = 0;
    int code = environment_read("PAPCOLL_PROGRESS_CPU", NULL, &core, &set);
    if (code != MPI_SUCCESS) return code;
    if (!set) core = -1;
    engine_lock();
    if (thread_users == 0) {
        thread_stop = 0;
        chosen_core = (long)core; /* the thread reads it once it runs, after pthread_create */
        if (pthread_create(&thread, NULL, progress_main, NULL) != 0)
            code = record_error(MPI_ERR_OTHER, "papcoll: could not start the progress thread");
    }
    if (code == MPI_SUCCESS) thread_users++;
    engine_unlock();
    return code;
}

void progress_thread_release(void) {
    engine_lock();
    int last = --thread_users == 0;
    if (last) {
        thread_stop = 1;
        pthread_cond_signal(&work_arrived);
    }
    engine_unlock();
    if (last) pthread_join(thread, NULL);
}
