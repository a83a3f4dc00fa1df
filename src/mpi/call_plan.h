/* call_plan.h - the plan a call runs (call_plan.c): built once per key and kept in a plan
 * cache (plan_cache.h), for blocking, non-blocking and persistent calls alike. */
#ifndef PAPCOLL_MPI_CALL_PLAN_H
#define PAPCOLL_MPI_CALL_PLAN_H

#include "internal.h"

/* The plan for this shape (and arrival class) from pc's cache, or built now; classes and
 * arrivals (P each) for a PAP-aware algorithm, else NULL. */
int call_plan_prepare(papcoll_comm *pc, plan_cache *cache,
                              const algorithm_entry *algorithm, int64_t count, int64_t extent,
                              int keep_order, const uint8_t *classes, const double *arrivals,
                              double tau, executor_plan **out);
/* The plan a call of algorithm (not auto) runs: for a PAP-aware one, built on the class of
 * arrivals (P seconds after the earliest), or where arrivals is NULL (some rank had no
 * usable prediction) the plain ring, canonical_scatter for canonical_straggler (which keeps
 * reproducible mode's order); every other algorithm ignores arrivals. */
int call_plan_for_call(papcoll_comm *pc, plan_cache *cache,
                               const algorithm_entry *algorithm, int64_t count, int64_t extent,
                               int commutative, const double *arrivals, double tau,
                               executor_plan **out);

#endif /* PAPCOLL_MPI_CALL_PLAN_H */
