/* auto_call.h - auto's one decision, for every kind of call: a blocking call, a
 * non-blocking post, a persistent start, and papcoll_resolve_algorithm's question all go
 * through auto_decide, with one cache of decisions and one closed loop per decision site
 * (decision_site.h). What differs between the kinds is only what MPI lets each do, and it is
 * said once, here:
 *
 *   kind       arrivals from (the caller)      a miss is decided      the closed loop
 *   BLOCKING   the monitor, at the call        by one rank, sent      measures and counts
 *              (monitor_gather)                (choice_sharing.c)     the call (monitor)
 *   POSTED     what the monitor learnt in      locally, kept in the   read only: its
 *              earlier calls                   communicator's cache   verdict, no probe
 *              (monitor_learnt_arrivals)
 *   STARTED    the request's own history       locally, kept in the   the request's own,
 *              (arrival_history.h)             request's own cache    where its starts are
 *                                                                     measured
 *   ASKED      as POSTED                       locally, kept nowhere  read only
 *
 * Why these and no more. A post may not wait for a message (a rank may post, then block in
 * a send that another rank receives only before it posts: MPI orders collectives, not
 * collectives against point-to-point), so its decision is local; posts and blocking calls
 * on a communicator come in the same order on every rank, so both keep their decisions in
 * the communicator's one cache and every rank's cache stays alike (which choice_sharing.c
 * needs), and a post of a shape decided before (by a blocking call or a post) finds it there
 * without simulating. Starts of different persistent requests may come in different orders
 * on different ranks (MPI-4.1 sect. 6.13), also against the communicator's other calls, so
 * a start may read nothing that other calls change: it keeps its own decisions and
 * measurements, fed by its own starts. A post's time from the last arrival to completion
 * is not measured (its completion is the program's wait, on each rank apart), so posts
 * read the loop's verdict but never probe. */
#ifndef PAPCOLL_MPI_AUTO_CALL_H
#define PAPCOLL_MPI_AUTO_CALL_H

#include "internal.h"

typedef enum auto_call_kind {
    AUTO_CALL_BLOCKING,  /* papcoll_allreduce: every rank in the call */
    AUTO_CALL_POSTED,    /* papcoll_iallreduce */
    AUTO_CALL_STARTED,   /* papcoll_start of a persistent request of auto */
    AUTO_CALL_ASKED,     /* papcoll_resolve_algorithm: one rank may ask alone; changes nothing */
} auto_call_kind;

/* One call's question to auto. */
typedef struct auto_call {
    auto_call_kind kind;
    int64_t count, extent;
    int commutative;
    MPI_Datatype datatype;  /* what the rules file's rules match on (rules.h) */
    MPI_Op op;
    /* P predicted arrivals (seconds after the earliest), or NULL: none usable; tau for the
     * class's unit (arrival_class.h) */
    const double *arrivals;
    double tau;
    /* STARTED: the request's own site, and what its earlier starts were measured to take
     * (observed tags and seconds, from its start-time exchange); NULL, 0 otherwise */
    decision_site *site;
    const monitor_call_tag *observed_tags;
    const double *observed_seconds;
    int observed_count;
    int measured;        /* STARTED: the request measures its starts (the loop may probe) */
} auto_call;

/* auto's decision for call into *out (with native_variant where native runs: POSTED and
 * STARTED run MPI_Iallreduce, whose algorithm papcoll cannot set, so always 0 there).
 * *tag: what the call's measurement comes back under (STARTED keeps it until then;
 * BLOCKING hands it to the monitor itself); may be NULL. */
int auto_decide(papcoll_comm *pc, const auto_call *call, auto_choice *out,
                monitor_call_tag *tag);

#endif /* PAPCOLL_MPI_AUTO_CALL_H */
