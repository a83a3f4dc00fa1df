/* plan_cache.h - the plans of one papcoll communicator (no per-call tax): a
 * schedule, with everything the executor derives from it, is built once per key (algorithm,
 * shape, operand order, predicted arrival class) and reused by every call with that key.
 * A few keys are kept, least recently used out, so a program alternating between shapes
 * or between a balanced and a late pattern does not rebuild on every switch. */
#ifndef PAPCOLL_MPI_PLAN_CACHE_H
#define PAPCOLL_MPI_PLAN_CACHE_H

#include "executor.h"

enum { PLAN_CACHE_SIZE = 8 };

typedef struct plan_cache {
    executor_plan plans[PLAN_CACHE_SIZE]; /* an empty slot has no schedule */
    int64_t last_used[PLAN_CACHE_SIZE];
    int64_t clock;
    /* posts' plans (nonblocking.c): a plan's tag_count is the most any rank's schedule
     * uses, not this rank's (call_plan.c says why) */
    int tags_alike;
} plan_cache;

/* The plan built for key, or NULL. key->arrival_class is compared, not kept. */
executor_plan *plan_cache_find(plan_cache *cache, const plan_key *key);
/* An empty slot for a new plan: the least recently used one that no operation runs
 * (executor_plan.users), released; NULL when every plan is in use. */
executor_plan *plan_cache_free_slot(plan_cache *cache);
/* Releases every plan (the parameters changed, or the communicator is freed). */
void plan_cache_clear(plan_cache *cache);

/* 1 when two keys are equal (the classes compared byte by byte). */
int plan_key_equal(const plan_key *a, const plan_key *b);

#endif /* PAPCOLL_MPI_PLAN_CACHE_H */
