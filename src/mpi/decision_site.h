/* decision_site.h - where auto keeps its decisions and what they were measured to take:
 * the model's decisions per shape and arrival class (choose.h) and the closed loop's table
 * (auto_feedback.h), with the scratch a decision rounds its arrivals into. A communicator
 * has one, for its blocking and non-blocking calls; a persistent request of auto has one of
 * its own (auto_call.h says why). */
#ifndef PAPCOLL_MPI_DECISION_SITE_H
#define PAPCOLL_MPI_DECISION_SITE_H

#include <stdint.h>

#include "auto_feedback.h"
#include "choose.h"

typedef struct decision_site {
    choice_cache choices;      /* the model's decisions (every rank's holds the same keys) */
    feedback_table *feedback;  /* the closed loop's measurements (~23 KB: allocated) */
    uint8_t *classes;          /* P: the call's predicted arrival class of every rank */
    uint8_t *profile;          /* P: those classes sorted (the decision's key) */
    double *class_arrivals;    /* P: the classes' representative arrivals */
} decision_site;

/* MPI_SUCCESS or MPI_ERR_NO_MEM (then release it). */
int decision_site_init(decision_site *site, int32_t ranks);
/* Forgets every decision and measurement (the parameters changed); the memory stays. */
void decision_site_clear(decision_site *site);
void decision_site_release(decision_site *site);

#endif /* PAPCOLL_MPI_DECISION_SITE_H */
