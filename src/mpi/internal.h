/* internal.h - the papcoll communicator (struct papcoll_comm) that communicator.c, the
 * monitor (monitor.c and its parts) and binding.c share. The executor (executor.h) and the
 * error state (errors.h) stand apart and know nothing of it. */
#ifndef PAPCOLL_MPI_INTERNAL_H
#define PAPCOLL_MPI_INTERNAL_H

#include "decision_site.h"
#include "errors.h"
#include "executor.h"
#include "monitor.h"
#include "native_variants.h"
#include "papcoll.h"
#include "parameters.h"
#include "plan_cache.h"
#include "rules.h"
#include "tag_counter.h"

/* Sizes whose reproducible-mode decision is kept (a training loop has a few). */
enum { REPRODUCIBLE_CHOICES = 8 };

struct papcoll_comm {
    MPI_Comm comm;             /* private duplicate: our tags never meet the user's */
    int size, rank;
    char algorithm[64];        /* "auto" or a registered name */
    owned_parameters parameters; /* the algorithms' parameters, copied from the config */
    int32_t *groups;           /* the group of every rank (hierarchical algorithms) */
    /* 1: every rank holds its world's clock offset and node (world_reference.h), so the
     * monitor takes its clock from there instead of measuring (rank_groups.c decides) */
    int shares_world_reference;
    papcoll_config config;     /* the rest of the config (its parameters zeroed: see above) */
    plan_cache plans;          /* schedules built once per shape and arrival class */
    /* auto's decisions per shape and arrival class, and what they were measured to take,
     * for the blocking and non-blocking calls (auto_call.h) */
    decision_site decisions;
    rules_set rules;           /* the rules file's rules, consulted before the model */
    native_variants natives;   /* the MPI library's algorithms auto may run as native */
    auto_choice last_choice;        /* papcoll_last_choice */
    /* auto's decisions in reproducible mode (reproducible.c), per vector size and model */
    struct reproducible_choice {
        int64_t count, extent;
        double model[3];
        const algorithm_entry *algorithm; /* NULL: empty */
    } reproducible_choices[REPRODUCIBLE_CHOICES];
    int reproducible_next;     /* the entry the next decision replaces */
    uint8_t *call_classes;     /* per call: the predicted arrival class of every rank */
    double *call_arrivals;     /* per call: its representative arrivals (call_plan.c) */
    executor_workspace workspace;
    monitor_state monitor;
    /* 1: comm carries the monitor's and the non-blocking calls' messages too, above the
     * blocking calls' SCHED_MAX_TAG + 1 tags (communicator.c: prepare_nonblocking says why) */
    int shares_tag_space;
    /* Non-blocking and persistent all-reduces: comm (or a duplicate), their tags from a
     * counter (tag_counter.c) */
    MPI_Comm nonblocking_comm;
    tag_counter tags;
    /* the posts of this communicator in flight on this rank, newest first: whose tags a
     * later post may have to wait for (operation.c); guarded by the engine's lock */
    struct papcoll_operation *tag_holders;
    int64_t tag_waits;         /* posts that waited for one (papcoll_tag_holders) */
    int32_t nonblocking_outstanding; /* posted, request not yet freed (__atomic) */
    int32_t nonblocking_spoiled;     /* one failed with messages in flight (__atomic) */
    int32_t persistent_alive;        /* persistent requests not yet freed (__atomic) */
    plan_cache nonblocking_plans;
    int progress_thread;       /* this communicator holds the progress thread */
    /* The last (datatype, op) pair found compatible (call_arguments.c: call_arguments_pair). */
    MPI_Datatype checked_datatype;
    MPI_Op checked_op;
};

#endif /* PAPCOLL_MPI_INTERNAL_H */
