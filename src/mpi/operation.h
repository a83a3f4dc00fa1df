/* operation.h - one non-blocking all-reduce in flight: what it runs, where, and
 * the generalized MPI request the program holds for it. papcoll_iallreduce (nonblocking.c)
 * makes one per post and frees it when the program completes its request; a persistent
 * request (persistent.c) owns one and reuses it at every start. The progress engine
 * (progress.c) advances them. */
#ifndef PAPCOLL_MPI_OPERATION_H
#define PAPCOLL_MPI_OPERATION_H

#include "auto_call.h"
#include "internal.h"
#include "request_settling.h"

typedef struct papcoll_operation {
    struct papcoll_operation *next; /* in the progress engine's list while it runs */
    papcoll_comm *pc;
    executor_plan *plan;       /* held (plan->users) until the request is freed; NULL when
                                  native runs or nothing has to */
    executor_workspace workspace;
    executor_run run;
    MPI_Request native;        /* auto chose native: its MPI_Iallreduce, else REQUEST_NULL */
    /* a persistent request's MPI_Allreduce_init, started instead of an MPI_Iallreduce */
    MPI_Request native_persistent;
    /* persistent requests: this rank's start time to every other rank and theirs to it
     * (2 (P - 1) requests), taken with the operation; count 0 when not exchanged */
    MPI_Request *arrival_requests;
    const int32_t *arrival_kinds; /* per request: >= 0 a receive, < 0 a send */
    int arrival_count;
    MPI_Request request;       /* the generalized request the program holds */
    /* its tags (tag_counter.h): schedule tag t travels as tag_first + t, and a
     * persistent request's start times on tag_first - 1; tag_count 0: a persistent
     * request's (its range is its own) or nothing of papcoll's to send */
    int32_t tag_first, tag_count;
    int64_t place;             /* its call's place in the communicator's order */
    int tags_claimed;          /* no earlier post holding an overlapping range is in flight */
    int tag_waited;            /* it had to wait for one (counted once: papcoll_tag_holders) */
    struct papcoll_operation *next_holder; /* in pc->tag_holders while in flight */
    int holds_tags;
    /* After a failure: the requests still in flight are settled (request_settling.h) before
     * the operation finishes; start_times_abandoned: start-time messages MPI may still
     * write, so the persistent request never frees their memory */
    request_settling settling, start_times_settling;
    int64_t start_times_abandoned;
    int plan_owned;            /* plan is the operation's own (every cached one was in use) */
    int error;                 /* MPI_SUCCESS or the error class the operation failed with */
    char error_text[320];      /* its message: it may fail in the progress thread, and the
                                  message must reach the thread that completes it */
    struct papcoll_persistent *owner; /* NULL: freed with its request (papcoll_iallreduce) */
    /* Two ends, which MPI libraries order differently (__atomic): the engine finishes the
     * operation (running 0: its schedule is done, nothing of it runs any more), and MPI
     * calls the request's free function (held_by_mpi 0: MPI will not call back). Open MPI
     * calls the free function when the last reference goes, which may be after the
     * program's MPI_Wait returned, if another thread completed the request: so whatever
     * the program may do next (start again, free the communicator) depends on running,
     * and only the operation's memory waits for held_by_mpi. */
    int32_t running, held_by_mpi;
    /* MPI_Wtime() when the engine finished the operation on this rank: a persistent start's
     * completion, which the next start sends to the others (auto's closed loop) */
    double finished_at;
    /* papcoll_start_notifying / papcoll_iallreduce_notifying: called when the engine
     * finishes the operation; the owner it notifies reports the error, so the generalized
     * request's callbacks then return MPI_SUCCESS (progress.c says why) */
    void (*finished)(void *argument, int error, const char *message);
    void *finished_argument;
} papcoll_operation;

/* progress.c */
/* Makes the generalized request of op, then takes op into the engine and advances it once
 * (messages that can go, go now); an op with nothing to run completes at once. */
int progress_begin(papcoll_operation *op);
/* The progress thread's users (communicators with PAPCOLL_PROGRESS_THREAD): the first
 * starts it, the last one's release stops it. */
int progress_thread_acquire(void);
void progress_thread_release(void);
/* progress_hook.c; each called with the engine's lock held */
/* Registers MPI's progress hook if this MPI has one and it is not registered now. The hook
 * calls advance from inside MPI's progress (progress.c hands its engine's entry): it
 * advances every operation unless the engine is busy (someone else advances it), and when
 * none is left in flight calls when_idle (if given) with the lock still held and returns
 * 1. */
void progress_hook_ensure(int (*advance)(void (*when_idle)(void)));
/* 1 unless this MPI has no hook or refused it: then only papcoll's own calls (and the
 * progress thread) advance papcoll. Registers a hook that is kept for good (Open MPI's)
 * with advance, as progress_hook_ensure. */
int progress_hook_available(int (*advance)(void (*when_idle)(void)));
/* How the engine looks at a request inside MPI's progress without driving it again (MPICH:
 * MPIX_Request_is_complete), or NULL where MPI_Test may be called there. */
int (*progress_hook_request_check(void))(MPI_Request);

/* progress.c: whether the calling thread holds the engine's lock (the debug assertions of
 * the functions below that need it) */
int progress_engine_held(void);
/* An operation that failed before progress_begin took it: finished under the engine's lock
 * (its holders' list), then released; nothing of it was posted to the engine. */
void progress_finish_unstarted(papcoll_operation *op);

/* operation.c; each called with the engine's lock held (asserted) */
/* The engine takes op in: a post joins its communicator's tag holders. */
void operation_entered(papcoll_operation *op);
/* The engine, before it advances op: 1 once op may post on its tags, 0 while an earlier post
 * holding an overlapping range is in flight on this rank (tag_counter.c says why that
 * cannot deadlock). */
int operation_claim_tags(papcoll_operation *op);
/* After op failed: one step of settling what it left in flight, without MPI's progress
 * where check is given (inside MPI's progress hook); 1 once all is settled. */
int operation_settle_step(papcoll_operation *op, int (*check)(MPI_Request));
/* The engine is done with op (before the request completes): what op held of its
 * communicator (a plan, its tags) is given back. */
void operation_finished(papcoll_operation *op);
/* MPI is done with op's request (its free function): a papcoll_iallreduce op is freed. Any
 * thread, no lock. */
void operation_released(papcoll_operation *op);

/* nonblocking.c */
/* What a post or start runs: algorithm, or for auto (NULL) auto's decision for call
 * (auto_call.h) into *choice and *tag (may be NULL); *plan from plans, or NULL where native
 * runs or count is 0. Local and alike on every rank given alike arguments. */
int operation_choose(papcoll_comm *pc, const algorithm_entry *algorithm, plan_cache *plans,
                     const auto_call *call, auto_choice *choice, monitor_call_tag *tag,
                     executor_plan **plan);
/* Starts op (its plan chosen, op->tag_first set; op->arrival_requests already posted) on
 * comm: MPI_Iallreduce where op->plan is NULL and count > 0, else the
 * plan; then hands it to the engine. On an error before progress_begin, op->request stays
 * MPI_REQUEST_NULL. */
int operation_start(papcoll_operation *op, MPI_Comm comm, const void *sendbuf,
                    void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op mpi_op);


#endif /* PAPCOLL_MPI_OPERATION_H */
